//! Seeded bot inputs.
