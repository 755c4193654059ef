//! Saves what the window shows as a PNG, and loads PNGs back for tests.
//!
//! # When to take a screenshot
//!
//! Call [`save_png`] after drawing a frame and *before*
//! [`WindowCanvas::present`]: it reads the renderer's back buffer, the one
//! being drawn into. SDL documents the back buffer as undefined after a
//! present (with double buffering it is an older frame, or garbage, on some
//! drivers), so reading after present may capture the wrong picture.
//! Reading does not disturb the frame: presenting afterwards shows it as
//! usual.

use std::path::{Path, PathBuf};

use sdl2::pixels::PixelFormatEnum;
use sdl2::render::WindowCanvas;

/// Why a screenshot could not be saved or loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScreenshotError {
    /// SDL could not read the window's pixels (the message is SDL's).
    #[error("could not read the window's pixels: {0}")]
    Read(String),
    /// The PNG file could not be written or read.
    #[error("could not access {}: {source}", path.display())]
    Io {
        /// The file being written or read.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The pixels could not be encoded as a PNG (e.g. a zero-sized window).
    #[error("could not encode the PNG: {0}")]
    Encode(#[from] png::EncodingError),
    /// The file is not a PNG this decoder understands.
    #[error("could not decode the PNG: {0}")]
    Decode(#[from] png::DecodingError),
    /// The decoder returned a colour layout this loader does not convert.
    #[error("unsupported PNG colour type {0:?}")]
    ColorType(png::ColorType),
}

/// Writes the canvas' current back buffer to `path` as an 8-bit RGB PNG
/// the size of the window's output.
///
/// Call it after drawing and before [`WindowCanvas::present`]; see the
/// [module docs](self) for why.
pub fn save_png(canvas: &WindowCanvas, path: &Path) -> Result<(), ScreenshotError> {
    let (width, height) = canvas.output_size().map_err(ScreenshotError::Read)?;
    // RGB24 is an array format in SDL: bytes R, G, B in memory order on any
    // endianness, rows packed with no padding (the binding passes a pitch
    // of exactly width * 3), which is PNG's RGB layout as is.
    let pixels = canvas
        .read_pixels(None, PixelFormatEnum::RGB24)
        .map_err(ScreenshotError::Read)?;
    write_png_rgb(path, width, height, &pixels)
}

/// Writes packed 8-bit RGB rows, top row first, to `path` as a PNG: the
/// window's screenshot and the offscreen report picture alike.
pub fn write_png_rgb(
    path: &Path,
    width: u32,
    height: u32,
    pixels: &[u8],
) -> Result<(), ScreenshotError> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(pixels)?;
    writer.finish()?;

    // Encoding to memory first keeps write errors out of a buffered
    // writer's drop, where they would be lost.
    std::fs::write(path, bytes).map_err(|source| ScreenshotError::Io {
        path: path.to_owned(),
        source,
    })
}

/// Reads a PNG as `(width, height, pixels)`, with pixels as packed 8-bit
/// RGB rows, top row first: `pixels[3 * (y * width + x)..][..3]` is the
/// pixel at (x, y). Any PNG colour type is converted; alpha is dropped.
pub fn load_png_rgb(path: &Path) -> Result<(u32, u32, Vec<u8>), ScreenshotError> {
    let bytes = std::fs::read(path).map_err(|source| ScreenshotError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut decoder = png::Decoder::new(bytes.as_slice());
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info()?;
    let mut buffer = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buffer)?;
    buffer.truncate(info.buffer_size());

    let rgb = match info.color_type {
        png::ColorType::Rgb => buffer,
        png::ColorType::Rgba => buffer
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect(),
        png::ColorType::Grayscale => buffer.iter().flat_map(|&v| [v, v, v]).collect(),
        png::ColorType::GrayscaleAlpha => buffer
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0]])
            .collect(),
        // normalize_to_color8 expands palettes, so this is not expected.
        other => return Err(ScreenshotError::ColorType(other)),
    };
    Ok((info.width, info.height, rgb))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `pixels` (of `color` type) as an 8-bit PNG to a fresh file.
    fn write_png(name: &str, width: u32, color: png::ColorType, pixels: &[u8]) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "lockstep-screenshot-{}-{name}.png",
            std::process::id()
        ));
        let channels = match color {
            png::ColorType::Rgba => 4,
            png::ColorType::GrayscaleAlpha => 2,
            png::ColorType::Grayscale => 1,
            _ => 3,
        };
        let height = u32::try_from(pixels.len() / channels).expect("small test image") / width;
        let mut bytes = Vec::new();
        let mut encoder = png::Encoder::new(&mut bytes, width, height);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().expect("header");
        writer.write_image_data(pixels).expect("data");
        writer.finish().expect("finish");
        std::fs::write(&path, bytes).expect("write test PNG");
        path
    }

    #[test]
    fn rgb_pngs_load_unchanged() {
        let pixels = [255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 8, 7];
        let path = write_png("rgb", 2, png::ColorType::Rgb, &pixels);
        let loaded = load_png_rgb(&path).expect("load");
        std::fs::remove_file(&path).expect("clean up");
        assert_eq!(loaded, (2, 2, pixels.to_vec()));
    }

    #[test]
    fn rgba_pngs_load_without_alpha() {
        let path = write_png("rgba", 1, png::ColorType::Rgba, &[10, 20, 30, 40]);
        let loaded = load_png_rgb(&path).expect("load");
        std::fs::remove_file(&path).expect("clean up");
        assert_eq!(loaded, (1, 1, vec![10, 20, 30]));
    }

    #[test]
    fn a_missing_file_names_its_path() {
        let path = Path::new("/nonexistent/lockstep/shot.png");
        let err = load_png_rgb(path).expect_err("no such file");
        assert!(matches!(err, ScreenshotError::Io { .. }));
        assert!(err.to_string().contains("/nonexistent/lockstep/shot.png"));
    }
}
