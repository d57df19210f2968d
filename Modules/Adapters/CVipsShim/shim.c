#include "CVipsShim.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <vips/vips.h>

struct courier_vips_token {
  atomic_int cancelled;
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_result = COURIER_VIPS_INIT_FAILED;
static int init_concurrency = 1;

static void drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, void *user) {
  (void)domain, (void)level, (void)message, (void)user;
}

static void do_init(void) {
  if (VIPS_INIT("courier")) {
    init_result = COURIER_VIPS_INIT_FAILED;
    return;
  }
  // Every call reads a different file once: the operation cache would only hold memory and
  // file descriptors (and could serve a stale header for a file rewritten at the same path).
  vips_cache_set_max(0);
  vips_concurrency_set(init_concurrency);
  // A library must not write to the host's stderr: libvips' warnings ("error in tile ...")
  // repeat what the failing call reports through its error buffer.
  g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, drop_log, NULL);
  init_result = COURIER_VIPS_OK;
}

int courier_vips_init(int concurrency) {
  // Only the first caller's value is used: pthread_once publishes it with the result.
  init_concurrency = concurrency > 0 ? concurrency : 1;
  pthread_once(&init_once, do_init);
  return init_result;
}

const char *courier_vips_version(void) { return vips_version_string(); }

int courier_vips_has_loader(const char *nickname) {
  return vips_type_find("VipsOperation", nickname) != 0;
}

static void copy_error(char *error, size_t error_len, const char *fallback) {
  if (error == NULL || error_len == 0) return;
  const char *text = vips_error_buffer();
  if (text == NULL || text[0] == '\0') text = fallback;
  snprintf(error, error_len, "%s", text);
  // Keep one line: libvips appends a newline to each message.
  size_t len = strlen(error);
  while (len > 0 && (error[len - 1] == '\n' || error[len - 1] == ' ')) error[--len] = '\0';
  for (size_t i = 0; i < len; i++)
    if (error[i] == '\n') error[i] = ' ';
  vips_error_clear();
}

static int starts_with(const char *text, const char *prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

static int blob_contains(VipsImage *image, const char *field, const char *needle) {
  const void *data = NULL;
  size_t len = 0;
  if (vips_image_get_typeof(image, field) == 0) return 0;
  if (vips_image_get_blob(image, field, &data, &len) || data == NULL) return 0;
  size_t needle_len = strlen(needle);
  const char *bytes = data;
  for (size_t i = 0; i + needle_len <= len; i++)
    if (memcmp(bytes + i, needle, needle_len) == 0) return 1;
  return 0;
}

static void read_info(VipsImage *image, const char *loader, courier_vips_info *info) {
  memset(info, 0, sizeof(*info));
  info->width = vips_image_get_width(image);
  info->height = vips_image_get_height(image);
  info->orientation = vips_image_get_orientation(image);
  info->has_alpha = vips_image_hasalpha(image) ? 1 : 0;
  snprintf(info->loader, sizeof(info->loader), "%s", loader ? loader : "");
  gchar **fields = vips_image_get_fields(image);
  for (gchar **field = fields; field && *field; field++) {
    // libvips names the EXIF GPS IFD "ifd3".
    if (starts_with(*field, "exif-ifd3-")) info->has_location = 1;
    if (strcmp(*field, "exif-data") == 0 || strcmp(*field, "xmp-data") == 0 ||
        strcmp(*field, "iptc-data") == 0)
      info->has_metadata = 1;
  }
  g_strfreev(fields);
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
  const char *loader = vips_foreign_find_load(path);
  if (loader == NULL) {
    copy_error(error, error_len, "not a known image format");
    return COURIER_VIPS_NOT_AN_IMAGE;
  }
  // Lazy: this reads the header only; pixels are decoded on demand.
  *image = vips_image_new_from_file(path, NULL);
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
  if (image) g_object_unref(image);
  return status;
}

static void on_eval(VipsImage *image, VipsProgress *progress, void *user) {
  (void)progress;
  courier_vips_token *token = user;
  // Checked once per tile row batch: the sink stops and the save returns an error.
  if (atomic_load(&token->cancelled)) vips_image_set_kill(image, TRUE);
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
    if (header) g_object_unref(header);
    return status;
  }
  int has_profile = vips_image_get_typeof(header, VIPS_META_ICC_NAME) != 0;
  g_object_unref(header);
  if (is_cancelled(token)) return COURIER_VIPS_CANCELLED;

  // vips_thumbnail with a file name uses shrink-on-load (JPEG, WebP, HEIF) and auto-rotates
  // by the EXIF orientation. An embedded profile is converted to sRGB before the metadata,
  // profile included, is stripped, so colours survive.
  VipsImage *current = NULL;
  int failed;
  if (has_profile)
    failed = vips_thumbnail(input, &current, max_edge, "height", max_edge, "size", VIPS_SIZE_DOWN,
                            "fail_on", VIPS_FAIL_ON_ERROR, "export_profile", "srgb", NULL);
  else
    failed = vips_thumbnail(input, &current, max_edge, "height", max_edge, "size", VIPS_SIZE_DOWN,
                            "fail_on", VIPS_FAIL_ON_ERROR, NULL);
  if (failed) {
    copy_error(error, error_len, "thumbnail failed");
    return COURIER_VIPS_ERROR;
  }

  // JPEG has 8 bits and no alpha: bring 16-bit images to 8-bit sRGB first so that the white
  // used for flattening is 255 in the right scale.
  if (vips_image_get_format(current) != VIPS_FORMAT_UCHAR) {
    VipsImage *converted = NULL;
    failed = vips_colourspace(current, &converted, VIPS_INTERPRETATION_sRGB, NULL);
    g_object_unref(current);
    if (failed) {
      copy_error(error, error_len, "colour conversion failed");
      return COURIER_VIPS_ERROR;
    }
    current = converted;
  }
  if (vips_image_hasalpha(current)) {
    VipsArrayDouble *white = vips_array_double_newv(1, 255.0);
    VipsImage *flat = NULL;
    failed = vips_flatten(current, &flat, "background", white, NULL);
    vips_area_unref(VIPS_AREA(white));
    g_object_unref(current);
    if (failed) {
      copy_error(error, error_len, "flatten failed");
      return COURIER_VIPS_ERROR;
    }
    current = flat;
  }

  if (token != NULL) {
    vips_image_set_progress(current, TRUE);
    g_signal_connect(current, "eval", G_CALLBACK(on_eval), token);
  }
  if (is_cancelled(token)) {
    g_object_unref(current);
    return COURIER_VIPS_CANCELLED;
  }
  failed = vips_jpegsave(current, output, "Q", quality, "strip", strip ? TRUE : FALSE,
                         "optimize_coding", TRUE, NULL);
  if (failed) {
    g_object_unref(current);
    if (is_cancelled(token)) {
      vips_error_clear();
      return COURIER_VIPS_CANCELLED;
    }
    copy_error(error, error_len, "JPEG encoding failed");
    return COURIER_VIPS_ERROR;
  }
  memset(output_info, 0, sizeof(*output_info));
  output_info->width = vips_image_get_width(current);
  output_info->height = vips_image_get_height(current);
  output_info->orientation = 1;
  snprintf(output_info->loader, sizeof(output_info->loader), "jpegload");
  g_object_unref(current);
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
