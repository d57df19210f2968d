// The few rtnetlink and Linux socket calls Swift cannot make directly (Glibc does not export
// sockaddr_nl, NETLINK_ROUTE or the RTMGRP_* groups). Messages are parsed in Swift.
#ifndef COURIER_CNETLINK_H
#define COURIER_CNETLINK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// Opens a non-blocking NETLINK_ROUTE socket bound to `groups` (0 for a request socket).
// `rcvbuf` > 0 sets SO_RCVBUF (SO_RCVBUFFORCE first, when privileged, so a small value sticks).
// Returns the fd, or -errno.
int courier_nl_open(uint32_t groups, int rcvbuf);

// Sends a dump request (NLM_F_REQUEST | NLM_F_DUMP) of `type` (RTM_GETLINK, RTM_GETADDR,
// RTM_GETROUTE) for `family`, with sequence number `seq`. Returns 0 or -errno.
int courier_nl_request_dump(int fd, uint16_t type, uint8_t family, uint32_t seq);

// Receives one datagram without blocking. Returns its length (`*truncated` set when it did not
// fit), or -errno (-EAGAIN when nothing is queued, -ENOBUFS after an overrun). `*sender_pid`
// gets the sender's netlink port id (0 for the kernel).
ssize_t courier_nl_recv(int fd, void *buffer, size_t length, uint32_t *sender_pid,
                        int *truncated);

// The receive buffer size the kernel granted, or -errno.
int courier_nl_rcvbuf(int fd);

// Opens a non-blocking eventfd used to wake the monitor's thread. Returns the fd, or -errno.
int courier_eventfd_open(void);

// Makes an eventfd readable. Returns 0 or -errno.
int courier_eventfd_signal(int fd);

// Waits until `fd` is readable (returns 1), `wake_fd` is readable (returns 2) or
// `timeout_ms` passes (returns 0; -1 waits for ever). Returns -errno on failure.
int courier_wait(int fd, int wake_fd, int timeout_ms);

// Moves the CALLING THREAD into the network namespace at `path` (/var/run/netns/NAME).
// Returns 0 or -errno.
int courier_setns_net(const char *path);

// Sends raw bytes to the multicast `groups` from `fd` (needs CAP_NET_ADMIN). Tests use it to
// check that messages from a process, not the kernel, are ignored. Returns 0 or -errno.
int courier_nl_send_to_groups(int fd, uint32_t groups, const void *bytes, size_t length);

// Closes a descriptor.
void courier_close(int fd);

#endif
