//! What can be traced: numbers by their bits, and arrays of them.

use serde::{Deserialize, Serialize};

/// How a traced value's bits read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// `f32` bits.
    F32,
    /// `f64` bits.
    F64,
    /// A signed integer, sign-extended to 64 bits.
    Int,
    /// An unsigned integer.
    Uint,
    /// A bool, 0 or 1.
    Bool,
}

impl Kind {
    /// Its number on the wire ([`lockstep_protocol::TracedValue::kind`]).
    pub fn code(self) -> u8 {
        match self {
            Kind::F32 => 0,
            Kind::F64 => 1,
            Kind::Int => 2,
            Kind::Uint => 3,
            Kind::Bool => 4,
        }
    }

    /// The kind numbered `code`, if any.
    pub fn from_code(code: u8) -> Option<Kind> {
        [Kind::F32, Kind::F64, Kind::Int, Kind::Uint, Kind::Bool]
            .into_iter()
            .find(|k| k.code() == code)
    }
}

/// A traced value: its kind and the bits of each element (one for a
/// scalar).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Value {
    /// How the bits read.
    pub kind: Kind,
    /// One word per element.
    pub bits: Vec<u64>,
}

impl Value {
    /// The bits as the diff line prints them: floats in hex, integers in
    /// decimal, several in brackets.
    pub fn bits_text(&self) -> String {
        self.join(|bits| match self.kind {
            Kind::F32 => format!("0x{bits:08x}"),
            Kind::F64 => format!("0x{bits:016x}"),
            Kind::Int => (bits as i64).to_string(),
            Kind::Uint => bits.to_string(),
            Kind::Bool => (bits != 0).to_string(),
        })
    }

    /// The value as a number reads, floats decoded.
    pub fn number_text(&self) -> String {
        self.join(|bits| match self.kind {
            Kind::F32 => format!("{:?}", f32::from_bits(bits as u32)),
            Kind::F64 => format!("{:?}", f64::from_bits(bits)),
            _ => String::new(),
        })
    }

    fn join(&self, each: impl Fn(u64) -> String) -> String {
        let parts: Vec<String> = self.bits.iter().map(|&b| each(b)).collect();
        match parts.as_slice() {
            [one] => one.clone(),
            _ => format!("[{}]", parts.join(",")),
        }
    }
}

/// A value [`trace`](super::trace) takes: a number or an array of numbers.
pub trait Traced {
    /// Its bits.
    fn value(&self) -> Value;

    /// The smallest change to it, for fault injection: one unit in the
    /// last place of a float (or of an array's first element), one more
    /// for an integer, the other bool.
    fn nudge(&mut self);
}

macro_rules! traced_float {
    ($t:ty, $kind:expr) => {
        impl Traced for $t {
            fn value(&self) -> Value {
                Value {
                    kind: $kind,
                    bits: vec![u64::from(self.to_bits())],
                }
            }

            fn nudge(&mut self) {
                *self = <$t>::from_bits(self.to_bits().wrapping_add(1));
            }
        }
    };
}

traced_float!(f32, Kind::F32);
traced_float!(f64, Kind::F64);

macro_rules! traced_int {
    ($kind:expr, $wide:ty, $($t:ty),*) => {$(
        impl Traced for $t {
            fn value(&self) -> Value {
                Value {
                    kind: $kind,
                    // Sign-extended or zero-extended to 64 bits, by design.
                    bits: vec![*self as $wide as u64],
                }
            }

            fn nudge(&mut self) {
                *self = self.wrapping_add(1);
            }
        }
    )*};
}

traced_int!(Kind::Int, i64, i8, i16, i32, i64, isize);
traced_int!(Kind::Uint, u64, u8, u16, u32, u64, usize);

impl Traced for bool {
    fn value(&self) -> Value {
        Value {
            kind: Kind::Bool,
            bits: vec![u64::from(*self)],
        }
    }

    fn nudge(&mut self) {
        *self = !*self;
    }
}

impl<T: Traced, const N: usize> Traced for [T; N] {
    fn value(&self) -> Value {
        slice_value(self)
    }

    fn nudge(&mut self) {
        if let Some(first) = self.first_mut() {
            first.nudge();
        }
    }
}

/// A slice is traced by its elements; a fault cannot change it (it is
/// borrowed), so a fault should name a scalar's or an array's label.
impl<T: Traced> Traced for &[T] {
    fn value(&self) -> Value {
        slice_value(self)
    }

    fn nudge(&mut self) {}
}

fn slice_value<T: Traced>(items: &[T]) -> Value {
    let mut kind = Kind::Uint;
    let mut bits = Vec::with_capacity(items.len());
    for item in items {
        let value = item.value();
        kind = value.kind;
        bits.extend(value.bits);
    }
    Value { kind, bits }
}
