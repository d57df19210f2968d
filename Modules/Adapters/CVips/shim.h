// Only the version macros: they need no GLib include path, so importing CVips from Swift
// needs no pkg-config flags (pkg-config's -pthread is what SwiftPM warned about). The real
// calls go through CVipsShim, which is compiled with the GLib include paths.
#include <vips/version.h>
