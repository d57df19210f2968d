#include "CNetlink.h"
int courier_netlink_placeholder(void) { return 0; }
