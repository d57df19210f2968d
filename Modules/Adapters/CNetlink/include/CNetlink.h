int courier_netlink_placeholder(void);
