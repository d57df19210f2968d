#include "CDBusShim.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

// libsystemd is loaded with dlopen on first use, not linked: a command that never asks for the
// path never maps it, and a system without it is a clear "no system D-Bus" rather than a
// binary that cannot start (decision 2600). The functions used are declared here by hand from
// sd-bus's stable API (libsystemd.so.0, systemd 221 and later); every sd-bus object is opaque.
typedef struct sd_bus sd_bus;
typedef struct sd_bus_message sd_bus_message;
typedef struct sd_bus_slot sd_bus_slot;
typedef struct {
  const char *name;
  const char *message;
  int _need_free;
} sd_bus_error;
typedef int (*sd_bus_message_handler_t)(sd_bus_message *, void *, sd_bus_error *);

static struct {
  int (*open_system)(sd_bus **);
  sd_bus *(*flush_close_unref)(sd_bus *);
  int (*add_match)(sd_bus *, sd_bus_slot **, const char *, sd_bus_message_handler_t, void *);
  int (*process)(sd_bus *, sd_bus_message **);
  int (*get_fd)(sd_bus *);
  int (*get_events)(sd_bus *);
  int (*get_timeout)(sd_bus *, uint64_t *);
  int (*call_method)(sd_bus *, const char *, const char *, const char *, const char *,
                     sd_bus_error *, sd_bus_message **, const char *, ...);
  int (*get_property)(sd_bus *, const char *, const char *, const char *, const char *,
                      sd_bus_error *, sd_bus_message **, const char *);
  int (*get_property_trivial)(sd_bus *, const char *, const char *, const char *, const char *,
                              sd_bus_error *, char, void *);
  int (*get_property_string)(sd_bus *, const char *, const char *, const char *, const char *,
                             sd_bus_error *, char **);
  int (*read_basic)(sd_bus_message *, char, void *);
  int (*enter_container)(sd_bus_message *, char, const char *);
  int (*exit_container)(sd_bus_message *);
  int (*skip)(sd_bus_message *, const char *);
  sd_bus_message *(*message_unref)(sd_bus_message *);
  void (*error_free)(sd_bus_error *);
  int (*error_is_set)(const sd_bus_error *);
  // Optional (systemd 240): a bound on each call, so a wedged service cannot stall the reader.
  int (*set_method_call_timeout)(sd_bus *, uint64_t);
} sd;

struct courier_dbus {
  sd_bus *bus;
  int want;
  int changed;
};

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_result = -1;
static char load_error[512];

#define NM_NAME "org.freedesktop.NetworkManager"
#define NM_PATH "/org/freedesktop/NetworkManager"
#define NETWORKD_NAME "org.freedesktop.network1"
#define NETWORKD_PATH "/org/freedesktop/network1"
#define NETWORKD_MANAGER "org.freedesktop.network1.Manager"

static int load_symbols(void *handle) {
#define LOAD(field, name)                                                                     \
  do {                                                                                         \
    *(void **)(&sd.field) = dlsym(handle, name);                                               \
    if (sd.field == NULL) {                                                                    \
      snprintf(load_error, sizeof(load_error), "%s lacks %s", COURIER_DBUS_LIBRARY, name);    \
      return 0;                                                                                \
    }                                                                                          \
  } while (0)
  LOAD(open_system, "sd_bus_open_system");
  LOAD(flush_close_unref, "sd_bus_flush_close_unref");
  LOAD(add_match, "sd_bus_add_match");
  LOAD(process, "sd_bus_process");
  LOAD(get_fd, "sd_bus_get_fd");
  LOAD(get_events, "sd_bus_get_events");
  LOAD(get_timeout, "sd_bus_get_timeout");
  LOAD(call_method, "sd_bus_call_method");
  LOAD(get_property, "sd_bus_get_property");
  LOAD(get_property_trivial, "sd_bus_get_property_trivial");
  LOAD(get_property_string, "sd_bus_get_property_string");
  LOAD(read_basic, "sd_bus_message_read_basic");
  LOAD(enter_container, "sd_bus_message_enter_container");
  LOAD(exit_container, "sd_bus_message_exit_container");
  LOAD(skip, "sd_bus_message_skip");
  LOAD(message_unref, "sd_bus_message_unref");
  LOAD(error_free, "sd_bus_error_free");
  LOAD(error_is_set, "sd_bus_error_is_set");
#undef LOAD
  *(void **)(&sd.set_method_call_timeout) = dlsym(handle, "sd_bus_set_method_call_timeout");
  return 1;
}

static void load_once_body(void) {
  const char *name = getenv("COURIER_LIBSYSTEMD");
  if (name == NULL || name[0] == '\0') name = COURIER_DBUS_LIBRARY;
  void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *why = dlerror();
    snprintf(load_error, sizeof(load_error), "%s", why ? why : "dlopen failed");
    return;
  }
  if (!load_symbols(handle)) {
    dlclose(handle);
    return;
  }
  load_error[0] = '\0';
  load_result = 0;
}

int courier_dbus_load(void) {
  pthread_once(&load_once, load_once_body);
  return load_result;
}

const char *courier_dbus_load_error(void) { return load_error; }

static int on_change(sd_bus_message *message, void *userdata, sd_bus_error *error) {
  (void)message, (void)error;
  ((courier_dbus *)userdata)->changed = 1;
  return 0;
}

static int add_matches(courier_dbus *c, const char *name, const char *path, const char *iface) {
  char rule[512];
  snprintf(rule, sizeof rule,
           "type='signal',path='%s',interface='org.freedesktop.DBus.Properties',"
           "member='PropertiesChanged',arg0='%s'",
           path, iface);
  int r = sd.add_match(c->bus, NULL, rule, on_change, c);
  if (r < 0) return r;
  snprintf(rule, sizeof rule,
           "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
           "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
           name);
  return sd.add_match(c->bus, NULL, rule, on_change, c);
}

courier_dbus *courier_dbus_open(int want, int *error) {
  if (courier_dbus_load() != 0) {
    *error = -ENOENT;
    return NULL;
  }
  courier_dbus *c = calloc(1, sizeof *c);
  if (c == NULL) {
    *error = -ENOMEM;
    return NULL;
  }
  c->want = want;
  int r = sd.open_system(&c->bus);
  if (r >= 0 && sd.set_method_call_timeout) sd.set_method_call_timeout(c->bus, 2000000);
  if (r >= 0 && want != COURIER_DBUS_WANT_NETWORKD) {
    r = add_matches(c, NM_NAME, NM_PATH, NM_NAME);
    // A lease's options (the captive-portal API, decision 2606) change on objects of their
    // own: the active connection's Dhcp4Config, then that object's Options.
    static const char *const lease_interfaces[] = {NM_NAME ".Connection.Active",
                                                   NM_NAME ".DHCP4Config"};
    for (int i = 0; r >= 0 && i < 2; i++) {
      char rule[512];
      snprintf(rule, sizeof rule,
               "type='signal',sender='%s',interface='org.freedesktop.DBus.Properties',"
               "member='PropertiesChanged',arg0='%s'",
               NM_NAME, lease_interfaces[i]);
      r = sd.add_match(c->bus, NULL, rule, on_change, c);
    }
  }
  if (r >= 0 && want != COURIER_DBUS_WANT_NETWORKMANAGER) {
    r = add_matches(c, NETWORKD_NAME, NETWORKD_PATH, NETWORKD_MANAGER);
  }
  if (r < 0) {
    courier_dbus_close(c);
    *error = r;
    return NULL;
  }
  return c;
}

void courier_dbus_close(courier_dbus *c) {
  if (c == NULL) return;
  if (c->bus) sd.flush_close_unref(c->bus);
  free(c);
}

// A failed call is the connection's failure (returned) unless the peer answered with a D-Bus
// error (a service gone between two calls, a property it lacks): that one reads as 1.
static int outcome(int r, sd_bus_error *error) {
  int answered = sd.error_is_set(error);
  sd.error_free(error);
  if (r >= 0) return 0;
  return answered || r == -ETIMEDOUT ? 1 : r;
}

static int has_owner(courier_dbus *c, const char *name, int *owned) {
  sd_bus_error error = {0};
  sd_bus_message *reply = NULL;
  int r = sd.call_method(c->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                         "org.freedesktop.DBus", "NameHasOwner", &error, &reply, "s", name);
  int value = 0;
  if (r >= 0) r = sd.read_basic(reply, 'b', &value);
  if (reply) sd.message_unref(reply);
  *owned = value;
  return outcome(r, &error);
}

static int read_u32(courier_dbus *c, const char *path, const char *iface, const char *member,
                    uint32_t *value) {
  sd_bus_error error = {0};
  int r = sd.get_property_trivial(c->bus, NM_NAME, path, iface, member, &error, 'u', value);
  return outcome(r, &error);
}

static int read_string(courier_dbus *c, const char *name, const char *path, const char *iface,
                       const char *member, char *out, size_t size) {
  sd_bus_error error = {0};
  char *text = NULL;
  int r = sd.get_property_string(c->bus, name, path, iface, member, &error, &text);
  if (r >= 0 && text) snprintf(out, size, "%s", text);
  free(text);
  return outcome(r, &error);
}

// Reads an object path property (`o`), or the first of an array of them (`ao`).
static int read_object(courier_dbus *c, const char *path, const char *iface, const char *member,
                       const char *type, char *out, size_t size) {
  sd_bus_error error = {0};
  sd_bus_message *reply = NULL;
  int r = sd.get_property(c->bus, NM_NAME, path, iface, member, &error, &reply, type);
  if (r >= 0 && type[0] == 'a') r = sd.enter_container(reply, 'a', "o");
  const char *object = NULL;
  if (r > 0 || (r == 0 && type[0] != 'a')) r = sd.read_basic(reply, 'o', &object);
  if (r > 0 && object) snprintf(out, size, "%s", object);
  if (reply) sd.message_unref(reply);
  return outcome(r, &error);
}

// The Options keys that may hold a captive-portal API's URI, best first: `captive_portal`
// (RFC 8910's name for option 114), `default_url` (NetworkManager's name for 114, RFC 3679's
// old one), `v4_captive_portal` (RFC 7710's option 160). Returns 0 for none of them.
static int captive_rank(const char *key) {
  static const char *const keys[] = {"captive_portal", "default_url", "v4_captive_portal"};
  for (int i = 0; i < 3; i++) {
    if (strcmp(key, keys[i]) == 0) return 3 - i;
  }
  return 0;
}

// Reads the captive-portal URI from a DHCP4Config object's Options (a{sv}, string values).
static int read_captive_portal(courier_dbus *c, const char *config, courier_dbus_facts *f) {
  sd_bus_error error = {0};
  sd_bus_message *reply = NULL;
  int r = sd.get_property(c->bus, NM_NAME, config, NM_NAME ".DHCP4Config", "Options", &error,
                          &reply, "a{sv}");
  if (r >= 0) r = sd.enter_container(reply, 'a', "{sv}");
  int best = 0;
  while (r > 0 && (r = sd.enter_container(reply, 'e', "sv")) > 0) {
    const char *key = NULL;
    if ((r = sd.read_basic(reply, 's', &key)) <= 0) break;
    int rank = key ? captive_rank(key) : 0;
    const char *value = NULL;
    if (rank > best && sd.enter_container(reply, 'v', "s") > 0) {
      if ((r = sd.read_basic(reply, 's', &value)) > 0 && value && value[0]) {
        best = rank;
        snprintf(f->captive_portal, sizeof f->captive_portal, "%s", value);
        snprintf(f->captive_portal_option, sizeof f->captive_portal_option, "%s", key);
      }
      if (r >= 0) r = sd.exit_container(reply);
    } else {
      r = sd.skip(reply, "v");
    }
    if (r >= 0) r = sd.exit_container(reply);
  }
  if (reply) sd.message_unref(reply);
  // A malformed dictionary is no advertisement, not a failed connection.
  int result = outcome(r, &error);
  return result < 0 && r != -ENXIO && r != -EBADMSG ? result : 0;
}

static int read_networkmanager(courier_dbus *c, courier_dbus_facts *f) {
  int r;
  if ((r = read_u32(c, NM_PATH, NM_NAME, "Metered", &f->metered)) < 0) return r;
  if ((r = read_u32(c, NM_PATH, NM_NAME, "Connectivity", &f->connectivity)) < 0) return r;
  char primary[256] = "";
  r = read_object(c, NM_PATH, NM_NAME, "PrimaryConnection", "o", primary, sizeof primary);
  if (r < 0) return r;
  if (primary[0] == '\0' || strcmp(primary, "/") == 0) return 0;
  const char *active = NM_NAME ".Connection.Active";
  r = read_string(c, NM_NAME, primary, active, "Id", f->primary_id, sizeof f->primary_id);
  if (r < 0) return r;
  r = read_string(c, NM_NAME, primary, active, "Type", f->primary_type, sizeof f->primary_type);
  if (r < 0) return r;
  char dhcp4[256] = "";
  if ((r = read_object(c, primary, active, "Dhcp4Config", "o", dhcp4, sizeof dhcp4)) < 0) return r;
  if (dhcp4[0] != '\0' && strcmp(dhcp4, "/") != 0) {
    if ((r = read_captive_portal(c, dhcp4, f)) < 0) return r;
  }
  char device[256] = "";
  if ((r = read_object(c, primary, active, "Devices", "ao", device, sizeof device)) < 0) return r;
  if (device[0] == '\0') return 0;
  return read_string(c, NM_NAME, device, NM_NAME ".Device", "Interface", f->primary_interface,
                     sizeof f->primary_interface);
}

int courier_dbus_read(courier_dbus *c, courier_dbus_facts *f) {
  memset(f, 0, sizeof *f);
  int owned = 0, r;
  if (c->want != COURIER_DBUS_WANT_NETWORKD) {
    if ((r = has_owner(c, NM_NAME, &owned)) < 0) return r;
    if (owned) {
      f->service = COURIER_DBUS_NETWORKMANAGER;
      return read_networkmanager(c, f);
    }
  }
  if (c->want != COURIER_DBUS_WANT_NETWORKMANAGER) {
    if ((r = has_owner(c, NETWORKD_NAME, &owned)) < 0) return r;
    if (owned) {
      f->service = COURIER_DBUS_NETWORKD;
      r = read_string(c, NETWORKD_NAME, NETWORKD_PATH, NETWORKD_MANAGER, "OnlineState",
                      f->online_state, sizeof f->online_state);
      if (r < 0) return r;
      return read_string(c, NETWORKD_NAME, NETWORKD_PATH, NETWORKD_MANAGER, "OperationalState",
                         f->operational_state, sizeof f->operational_state);
    }
  }
  return 0;
}

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int courier_dbus_wait(courier_dbus *c, int wake_fd, int timeout_ms) {
  int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  for (;;) {
    int r;
    while ((r = sd.process(c->bus, NULL)) > 0) {
    }
    if (r < 0) return r;
    if (c->changed) {
      c->changed = 0;
      return 1;
    }
    int wait_ms = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      if (left <= 0) return 0;
      wait_ms = (int)left;
    }
    uint64_t until = UINT64_MAX;
    if (sd.get_timeout(c->bus, &until) > 0 && until != UINT64_MAX) {
      struct timespec t;
      clock_gettime(CLOCK_MONOTONIC, &t);
      uint64_t now = (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
      int bus_ms = until > now ? (int)((until - now + 999) / 1000) : 0;
      if (wait_ms < 0 || bus_ms < wait_ms) wait_ms = bus_ms;
    }
    int events = sd.get_events(c->bus);
    if (events < 0) return events;
    struct pollfd fds[2] = {{.fd = sd.get_fd(c->bus), .events = (short)events},
                            {.fd = wake_fd, .events = POLLIN}};
    int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) return -errno;
    if (ready > 0 && fds[1].revents) return 0;
  }
}

int courier_dbus_wake_open(void) {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int courier_dbus_wake_signal(int fd) { return eventfd_write(fd, 1) == 0 ? 0 : -errno; }

void courier_dbus_wake_close(int fd) {
  if (fd >= 0) close(fd);
}

int courier_dbus_sleep(int wake_fd, int timeout_ms) {
  struct pollfd fd = {.fd = wake_fd, .events = POLLIN};
  for (;;) {
    int ready = poll(&fd, 1, timeout_ms);
    if (ready < 0 && errno == EINTR) continue;
    return ready > 0 ? 1 : 0;
  }
}
