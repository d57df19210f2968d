#include "CVipsShim.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// libvips is loaded with dlopen on the first compression, not linked: a command that never
// compresses never maps libvips and the hundred libraries it pulls in (X11, cairo, pango,
// HDF5, a second libcurl...), a missing libvips is a clear error rather than a binary that
// cannot start, and the package needs no GLib include paths (no unsafeFlags: decision 0353).
// The few functions used are declared here by hand, with the types of libvips 8's stable API
// (soname libvips.so.42): every pointer to a GLib or libvips object is opaque.
typedef void VipsImage;
typedef void VipsArea;
typedef unsigned long GType;
typedef int gboolean;
typedef void (*GLogFunc)(const char *, int, const char *, void *);

#define VIPS_SIZE_DOWN 2
#define VIPS_FAIL_ON_ERROR 2
#define VIPS_FORMAT_UCHAR 0
#define VIPS_INTERPRETATION_sRGB 22
#define VIPS_META_ICC_NAME "icc-profile-data"
#define G_LOG_LEVEL_WARNING (1 << 4)

static struct {
  int (*version)(int);
  int (*init)(const char *);
  void (*cache_set_max)(int);
  void (*concurrency_set)(int);
  const char *(*version_string)(void);
  GType (*type_find)(const char *, const char *);
  const char *(*error_buffer)(void);
  void (*error_clear)(void);
  const char *(*foreign_find_load)(const char *);
  VipsImage *(*image_new_from_file)(const char *, ...);
  int (*image_get_width)(const VipsImage *);
  int (*image_get_height)(const VipsImage *);
  int (*image_get_orientation)(VipsImage *);
  gboolean (*image_hasalpha)(VipsImage *);
  int (*image_get_format)(const VipsImage *);
  GType (*image_get_typeof)(const VipsImage *, const char *);
  int (*image_get_blob)(const VipsImage *, const char *, const void **, size_t *);
  char **(*image_get_fields)(VipsImage *);
  void (*image_set_kill)(VipsImage *, gboolean);
  void (*image_set_progress)(VipsImage *, gboolean);
  int (*thumbnail)(const char *, VipsImage **, int, ...);
  int (*colourspace)(VipsImage *, VipsImage **, int, ...);
  int (*flatten)(VipsImage *, VipsImage **, ...);
  int (*jpegsave)(VipsImage *, const char *, ...);
  void *(*array_double_newv)(int, ...);
  void (*area_unref)(VipsArea *);
  void (*object_unref)(void *);
  void (*strfreev)(char **);
  unsigned long (*signal_connect_data)(void *, const char *, void (*)(void), void *, void *, int);
  unsigned (*log_set_handler)(const char *, int, GLogFunc, void *);
} vips;

struct courier_vips_token {
  atomic_int cancelled;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result = COURIER_VIPS_INIT_FAILED;
static int init_concurrency = 1;
static char load_error[512];

static void drop_log(const char *domain, int level, const char *message, void *user) {
  (void)domain, (void)level, (void)message, (void)user;
}

static int load_symbols(void *handle) {
#define LOAD(field, name)                                                                     \
  do {                                                                                         \
    *(void **)(&vips.field) = dlsym(handle, name);                                             \
    if (vips.field == NULL) {                                                                  \
      snprintf(load_error, sizeof(load_error), "%s lacks %s", COURIER_VIPS_LIBRARY, name);    \
      return 0;                                                                                \
    }                                                                                          \
  } while (0)
  LOAD(version, "vips_version");
  LOAD(init, "vips_init");
  LOAD(cache_set_max, "vips_cache_set_max");
  LOAD(concurrency_set, "vips_concurrency_set");
  LOAD(version_string, "vips_version_string");
  LOAD(type_find, "vips_type_find");
  LOAD(error_buffer, "vips_error_buffer");
  LOAD(error_clear, "vips_error_clear");
  LOAD(foreign_find_load, "vips_foreign_find_load");
  LOAD(image_new_from_file, "vips_image_new_from_file");
  LOAD(image_get_width, "vips_image_get_width");
  LOAD(image_get_height, "vips_image_get_height");
  LOAD(image_get_orientation, "vips_image_get_orientation");
  LOAD(image_hasalpha, "vips_image_hasalpha");
  LOAD(image_get_format, "vips_image_get_format");
  LOAD(image_get_typeof, "vips_image_get_typeof");
  LOAD(image_get_blob, "vips_image_get_blob");
  LOAD(image_get_fields, "vips_image_get_fields");
  LOAD(image_set_kill, "vips_image_set_kill");
  LOAD(image_set_progress, "vips_image_set_progress");
  LOAD(thumbnail, "vips_thumbnail");
  LOAD(colourspace, "vips_colourspace");
  LOAD(flatten, "vips_flatten");
  LOAD(jpegsave, "vips_jpegsave");
  LOAD(array_double_newv, "vips_array_double_newv");
  LOAD(area_unref, "vips_area_unref");
  // GLib and GObject come with libvips: dlsym on its handle searches its dependencies too.
  LOAD(object_unref, "g_object_unref");
  LOAD(strfreev, "g_strfreev");
  LOAD(signal_connect_data, "g_signal_connect_data");
  LOAD(log_set_handler, "g_log_set_handler");
#undef LOAD
  return 1;
}

static void do_init(void) {
  const char *override = getenv("COURIER_LIBVIPS");
  const char *name = override && override[0] ? override : COURIER_VIPS_LIBRARY;
  // RTLD_LAZY: the libraries that are not linked with BIND_NOW resolve a function on its
  // first call, not every function of the whole tree now (libcurl and its 28 libraries:
  // 15.5 M instructions with RTLD_NOW, 12.9 M lazily; decision 1401).
  void *handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    snprintf(load_error, sizeof(load_error), "%s", why ? why : name);
    init_result = COURIER_VIPS_NOT_INSTALLED;
    return;
  }
  if (!load_symbols(handle)) {
    init_result = COURIER_VIPS_NOT_INSTALLED;
    return;
  }
  if (vips.version(0) != 8) {
    snprintf(load_error, sizeof(load_error), "%s is libvips %d, not 8", name, vips.version(0));
    init_result = COURIER_VIPS_NOT_INSTALLED;
    return;
  }
  if (vips.init("courier")) {
    snprintf(load_error, sizeof(load_error), "vips_init failed");
    init_result = COURIER_VIPS_INIT_FAILED;
    return;
  }
  // Every call reads a different file once: the operation cache would only hold memory and
  // file descriptors (and could serve a stale header for a file rewritten at the same path).
  vips.cache_set_max(0);
  vips.concurrency_set(init_concurrency);
  // A library must not write to the host's stderr: libvips' warnings ("error in tile ...")
  // repeat what the failing call reports through its error buffer.
  vips.log_set_handler("VIPS", G_LOG_LEVEL_WARNING, drop_log, NULL);
  init_result = COURIER_VIPS_OK;
}

int courier_vips_init(int concurrency) {
  // Only the first caller's value is used: pthread_once publishes it with the result.
  init_concurrency = concurrency > 0 ? concurrency : 1;
  pthread_once(&init_once, do_init);
  return init_result;
}

const char *courier_vips_load_error(void) { return load_error; }

const char *courier_vips_version(void) {
  return init_result == COURIER_VIPS_OK ? vips.version_string() : NULL;
}

int courier_vips_has_loader(const char *nickname) {
  return init_result == COURIER_VIPS_OK && vips.type_find("VipsOperation", nickname) != 0;
}

static void copy_error(char *error, size_t error_len, const char *fallback) {
  if (error == NULL || error_len == 0) return;
  const char *text = vips.error_buffer();
  if (text == NULL || text[0] == '\0') text = fallback;
  snprintf(error, error_len, "%s", text);
  // Keep one line: libvips appends a newline to each message.
  size_t len = strlen(error);
  while (len > 0 && (error[len - 1] == '\n' || error[len - 1] == ' ')) error[--len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (error[i] == '\n') error[i] = ' ';
  vips.error_clear();
}

static int starts_with(const char *text, const char *prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

static int blob_contains(VipsImage *image, const char *field, const char *needle) {
  const void *data = NULL;
  size_t len = 0;
  if (vips.image_get_typeof(image, field) == 0) return 0;
  if (vips.image_get_blob(image, field, &data, &len) || data == NULL) return 0;
  size_t needle_len = strlen(needle);
  const char *bytes = data;
  for (size_t i = 0; i + needle_len <= len; i++)
    if (memcmp(bytes + i, needle, needle_len) == 0) return 1;
  return 0;
}

static void read_info(VipsImage *image, const char *loader, courier_vips_info *info) {
  memset(info, 0, sizeof(*info));
  info->width = vips.image_get_width(image);
  info->height = vips.image_get_height(image);
  info->orientation = vips.image_get_orientation(image);
  info->has_alpha = vips.image_hasalpha(image) ? 1 : 0;
  snprintf(info->loader, sizeof(info->loader), "%s", loader ? loader : "");
  char **fields = vips.image_get_fields(image);
  for (char **field = fields; field && *field; field++) {
    // libvips names the EXIF GPS IFD "ifd3".
    if (starts_with(*field, "exif-ifd3-")) info->has_location = 1;
    if (strcmp(*field, "exif-data") == 0 || strcmp(*field, "xmp-data") == 0 ||
        strcmp(*field, "iptc-data") == 0)
      info->has_metadata = 1;
  }
  vips.strfreev(fields);
  if (blob_contains(image, "xmp-data", "GPSLatitude") ||
      blob_contains(image, "xmp-data", "GPSLongitude"))
    info->has_location = 1;
}

static int open_header(const char *path, VipsImage **image, courier_vips_info *info, char *error,
                       size_t error_len) {
  if (access(path, R_OK) != 0) {
    snprintf(error, error_len, "%s", strerror(errno));
    return COURIER_VIPS_UNREADABLE;
  }
  const char *loader = vips.foreign_find_load(path);
  if (loader == NULL) {
    copy_error(error, error_len, "not a known image format");
    return COURIER_VIPS_NOT_AN_IMAGE;
  }
  // Lazy: this reads the header only; pixels are decoded on demand.
  *image = vips.image_new_from_file(path, NULL);
  if (*image == NULL) {
    copy_error(error, error_len, "unreadable image header");
    return COURIER_VIPS_ERROR;
  }
  read_info(*image, loader, info);
  return COURIER_VIPS_OK;
}

int courier_vips_probe(const char *path, courier_vips_info *info, char *error, size_t error_len) {
  VipsImage *image = NULL;
  int status = open_header(path, &image, info, error, error_len);
  if (image) vips.object_unref(image);
  return status;
}

static void on_eval(VipsImage *image, void *progress, void *user) {
  (void)progress;
  courier_vips_token *token = user;
  // Checked once per tile row batch: the sink stops and the save returns an error.
  if (atomic_load(&token->cancelled)) vips.image_set_kill(image, 1);
}

static int is_cancelled(courier_vips_token *token) {
  return token != NULL && atomic_load(&token->cancelled);
}

int courier_vips_compress(const char *input, const char *output, int max_edge, int quality,
                          int strip, courier_vips_token *token, courier_vips_info *input_info,
                          courier_vips_info *output_info, char *error, size_t error_len) {
  VipsImage *header = NULL;
  int status = open_header(input, &header, input_info, error, error_len);
  if (status != COURIER_VIPS_OK) {
    if (header) vips.object_unref(header);
    return status;
  }
  int has_profile = vips.image_get_typeof(header, VIPS_META_ICC_NAME) != 0;
  vips.object_unref(header);
  if (is_cancelled(token)) return COURIER_VIPS_CANCELLED;

  // vips_thumbnail with a file name uses shrink-on-load (JPEG, WebP, HEIF) and auto-rotates
  // by the EXIF orientation. An embedded profile is converted to sRGB before the metadata,
  // profile included, is stripped, so colours survive.
  VipsImage *current = NULL;
  int failed;
  if (has_profile)
    failed = vips.thumbnail(input, &current, max_edge, "height", max_edge, "size", VIPS_SIZE_DOWN,
                            "fail_on", VIPS_FAIL_ON_ERROR, "export_profile", "srgb", NULL);
  else
    failed = vips.thumbnail(input, &current, max_edge, "height", max_edge, "size", VIPS_SIZE_DOWN,
                            "fail_on", VIPS_FAIL_ON_ERROR, NULL);
  if (failed) {
    copy_error(error, error_len, "thumbnail failed");
    return COURIER_VIPS_ERROR;
  }

  // JPEG has 8 bits and no alpha: bring 16-bit images to 8-bit sRGB first so that the white
  // used for flattening is 255 in the right scale.
  if (vips.image_get_format(current) != VIPS_FORMAT_UCHAR) {
    VipsImage *converted = NULL;
    failed = vips.colourspace(current, &converted, VIPS_INTERPRETATION_sRGB, NULL);
    vips.object_unref(current);
    if (failed) {
      copy_error(error, error_len, "colour conversion failed");
      return COURIER_VIPS_ERROR;
    }
    current = converted;
  }
  if (vips.image_hasalpha(current)) {
    void *white = vips.array_double_newv(1, 255.0);
    VipsImage *flat = NULL;
    failed = vips.flatten(current, &flat, "background", white, NULL);
    vips.area_unref(white);
    vips.object_unref(current);
    if (failed) {
      copy_error(error, error_len, "flatten failed");
      return COURIER_VIPS_ERROR;
    }
    current = flat;
  }

  if (token != NULL) {
    vips.image_set_progress(current, 1);
    vips.signal_connect_data(current, "eval", (void (*)(void))on_eval, token, NULL, 0);
  }
  if (is_cancelled(token)) {
    vips.object_unref(current);
    return COURIER_VIPS_CANCELLED;
  }
  failed = vips.jpegsave(current, output, "Q", quality, "strip", strip ? 1 : 0,
                         "optimize_coding", 1, NULL);
  if (failed) {
    vips.object_unref(current);
    if (is_cancelled(token)) {
      vips.error_clear();
      return COURIER_VIPS_CANCELLED;
    }
    copy_error(error, error_len, "JPEG encoding failed");
    return COURIER_VIPS_ERROR;
  }
  memset(output_info, 0, sizeof(*output_info));
  output_info->width = vips.image_get_width(current);
  output_info->height = vips.image_get_height(current);
  output_info->orientation = 1;
  snprintf(output_info->loader, sizeof(output_info->loader), "jpegload");
  vips.object_unref(current);
  return COURIER_VIPS_OK;
}

courier_vips_token *courier_vips_token_new(void) {
  courier_vips_token *token = malloc(sizeof(*token));
  if (token) atomic_init(&token->cancelled, 0);
  return token;
}

void courier_vips_token_cancel(courier_vips_token *token) {
  if (token) atomic_store(&token->cancelled, 1);
}

void courier_vips_token_free(courier_vips_token *token) { free(token); }

