#include "CVipsShim.h"
#include <vips/vips.h>
int courier_vips_placeholder(void) { return 0; }
