// Fixed-signature wrappers over the few sd-bus calls Courier needs to read NetworkManager's and
// systemd-networkd's path facts from the system bus. sd-bus's reads are variadic, which Swift
// cannot call. libsystemd itself is loaded with dlopen by the first courier_dbus_load
// (decision 2600): nothing here needs libsystemd's headers, and a program that never asks for
// the path never maps it.
#ifndef COURIER_DBUS_SHIM_H
#define COURIER_DBUS_SHIM_H

#include <stdint.h>

/// The shared library loaded: libsystemd's soname. The environment variable
/// COURIER_LIBSYSTEMD names another file (a path or a soname) to load instead.
#define COURIER_DBUS_LIBRARY "libsystemd.so.0"

/// Which service answered a read.
enum {
  /// Neither NetworkManager nor systemd-networkd owns its name on the bus.
  COURIER_DBUS_NO_SERVICE = 0,
  COURIER_DBUS_NETWORKMANAGER = 1,
  COURIER_DBUS_NETWORKD = 2,
};

/// Which services a connection reads: both (NetworkManager first), or only one.
enum {
  COURIER_DBUS_WANT_ANY = 0,
  COURIER_DBUS_WANT_NETWORKMANAGER = 1,
  COURIER_DBUS_WANT_NETWORKD = 2,
};

/// What one read of the bus found. Strings are NUL-terminated, cut to fit, empty when unknown.
typedef struct courier_dbus_facts {
  /// COURIER_DBUS_NO_SERVICE, COURIER_DBUS_NETWORKMANAGER or COURIER_DBUS_NETWORKD.
  int service;
  /// NetworkManager's NMMetered (0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no).
  uint32_t metered;
  /// NetworkManager's NMConnectivityState (0 unknown, 1 none, 2 portal, 3 limited, 4 full).
  uint32_t connectivity;
  /// The primary connection's name (`Id`), type (`Type`, e.g. 802-11-wireless) and first
  /// device's interface; all empty when NetworkManager has none ("/").
  char primary_id[128];
  char primary_type[64];
  char primary_interface[64];
  /// An RFC 8908 captive-portal API's URI the primary connection's DHCPv4 lease advertised
  /// (RFC 8910), read from its Dhcp4Config's Options, and the option's name there
  /// (`captive_portal`, `default_url`: option 114; `v4_captive_portal`: RFC 7710's 160); both
  /// empty when none (decision 2606).
  char captive_portal[512];
  char captive_portal_option[32];
  /// systemd-networkd's OnlineState and OperationalState.
  char online_state[32];
  char operational_state[32];
} courier_dbus_facts;

/// One connection to the system bus, with the matches for the services' changes.
typedef struct courier_dbus courier_dbus;

/// Loads libsystemd once per process (thread-safe). Later calls return the first call's
/// result: 0, or -1 (see courier_dbus_load_error()).
int courier_dbus_load(void);

/// Why libsystemd could not be loaded (dlopen's message); empty after a success.
const char *courier_dbus_load_error(void);

/// Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS when set, else the standard socket),
/// subscribes to the changes of the wanted services and to their names' owners. Needs a
/// successful courier_dbus_load. Returns the connection, or NULL with `*error` set to -errno.
courier_dbus *courier_dbus_open(int want, int *error);

/// Closes the connection and frees it (NULL is fine).
void courier_dbus_close(courier_dbus *connection);

/// Reads the facts now: which service owns its name, then its properties. Returns 0, or
/// -errno when the connection failed (the bus went away); a service answering with an error
/// (it vanished between the calls) reads as absent.
int courier_dbus_read(courier_dbus *connection, courier_dbus_facts *facts);

/// Handles what the bus sent, then waits for more until `timeout_ms` passes (-1: for ever) or
/// `wake_fd` is readable. Returns 1 when one of the services changed (a property or its name's
/// owner: read again), 0 after the timeout or a wake, -errno when the connection failed.
int courier_dbus_wait(courier_dbus *connection, int wake_fd, int timeout_ms);

/// An eventfd that wakes courier_dbus_wait and courier_dbus_sleep: returns the fd or -errno.
int courier_dbus_wake_open(void);

/// Makes the eventfd readable. Returns 0 or -errno.
int courier_dbus_wake_signal(int fd);

/// Closes the eventfd.
void courier_dbus_wake_close(int fd);

/// Waits until `wake_fd` is readable (returns 1) or `timeout_ms` passes (returns 0).
int courier_dbus_sleep(int wake_fd, int timeout_ms);

#endif
