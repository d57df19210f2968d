// Fixed-signature wrappers over the few libvips calls Courier needs. libvips operations are
// NULL-terminated variadic functions, which Swift cannot call; this header also keeps GLib
// types out of Swift. libvips itself is loaded with dlopen by the first courier_vips_init
// (decision 0353): nothing here needs libvips' headers, and a program that never compresses
// never loads it.
#ifndef COURIER_VIPS_SHIM_H
#define COURIER_VIPS_SHIM_H

#include <stddef.h>

/// Result codes of the shim's functions.
enum {
  COURIER_VIPS_OK = 0,
  /// libvips reported an error (corrupt or truncated data, write failure...).
  COURIER_VIPS_ERROR = 1,
  /// No loader recognises the file: it is not an image libvips knows.
  COURIER_VIPS_NOT_AN_IMAGE = 2,
  /// The cancellation token was set during the work.
  COURIER_VIPS_CANCELLED = 3,
  /// The file could not be opened or read.
  COURIER_VIPS_UNREADABLE = 4,
  /// libvips could not be initialised.
  COURIER_VIPS_INIT_FAILED = 5,
  /// libvips could not be loaded (not installed, or not libvips 8): see
  /// courier_vips_load_error().
  COURIER_VIPS_NOT_INSTALLED = 6,
};

/// The shared library loaded: libvips 8's soname. The environment variable COURIER_LIBVIPS
/// names another file (a path or a soname) to load instead.
#define COURIER_VIPS_LIBRARY "libvips.so.42"

/// What the shim learnt about an image.
typedef struct courier_vips_info {
  /// Pixel size as stored in the file (before any rotation).
  int width;
  int height;
  /// The EXIF orientation (1 to 8); 1 when the file has none.
  int orientation;
  /// Whether the image has an alpha channel.
  int has_alpha;
  /// Whether the file carries GPS data (an EXIF GPS field or GPS in XMP).
  int has_location;
  /// Whether the file carries EXIF, XMP or IPTC metadata at all.
  int has_metadata;
  /// The libvips loader's nickname, e.g. "jpegload", "pngload", "heifload".
  char loader[48];
} courier_vips_info;

/// A cancellation flag shared between the caller and a running compression.
typedef struct courier_vips_token courier_vips_token;

/// Loads and initialises libvips once per process (thread-safe), limiting its worker threads
/// and disabling its operation cache. Later calls return the first call's result.
/// Returns COURIER_VIPS_OK, COURIER_VIPS_NOT_INSTALLED or COURIER_VIPS_INIT_FAILED.
int courier_vips_init(int concurrency);

/// Why libvips could not be loaded or started (dlopen's message); empty after a success.
const char *courier_vips_load_error(void);

/// The libvips version string, e.g. "8.14.1"; NULL until libvips is initialised.
const char *courier_vips_version(void);

/// Whether a loader with this nickname (e.g. "heifload") is built into this libvips.
int courier_vips_has_loader(const char *nickname);

/// Reads an image's header (not its pixels) into `info`.
int courier_vips_probe(const char *path, courier_vips_info *info, char *error, size_t error_len);

/// Downsamples `input` (shrink-on-load, never upscaling) so that its long edge is at most
/// `max_edge` pixels, applies its EXIF orientation, converts it to sRGB, flattens any alpha
/// onto white and writes it as a JPEG of quality `quality` to `output`, without metadata when
/// `strip` is non-zero. `input_info` receives the input's header, `output_info` the output's
/// width and height. `token` may be NULL.
int courier_vips_compress(
    const char *input, const char *output, int max_edge, int quality, int strip,
    courier_vips_token *token, courier_vips_info *input_info, courier_vips_info *output_info,
    char *error, size_t error_len);

/// A new, unset cancellation token; NULL if out of memory.
courier_vips_token *courier_vips_token_new(void);
/// Sets the token: a compression using it stops at the next tile and reports CANCELLED.
void courier_vips_token_cancel(courier_vips_token *token);
/// Frees the token. It must no longer be in use.
void courier_vips_token_free(courier_vips_token *token);

#endif
