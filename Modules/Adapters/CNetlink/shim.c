#define _GNU_SOURCE
#include "CNetlink.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

int courier_nl_open(uint32_t groups, int rcvbuf) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return -errno;
  if (rcvbuf > 0) {
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0 &&
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf) != 0) {
      int error = errno;
      close(fd);
      return -error;
    }
  }
  struct sockaddr_nl address;
  memset(&address, 0, sizeof address);
  address.nl_family = AF_NETLINK;
  address.nl_groups = groups;
  if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
    int error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

int courier_nl_request_dump(int fd, uint16_t type, uint8_t family, uint32_t seq) {
  // The largest family header of the three (ifinfomsg) is sent; the kernel reads only the
  // family byte for links and addresses with non-strict checking, and the rtmsg for routes.
  struct {
    struct nlmsghdr header;
    union {
      struct ifinfomsg link;
      struct ifaddrmsg address;
      struct rtmsg route;
    } body;
  } request;
  memset(&request, 0, sizeof request);
  size_t body = type == RTM_GETLINK   ? sizeof(struct ifinfomsg)
                : type == RTM_GETADDR ? sizeof(struct ifaddrmsg)
                                      : sizeof(struct rtmsg);
  request.header.nlmsg_len = NLMSG_LENGTH(body);
  request.header.nlmsg_type = type;
  request.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  request.header.nlmsg_seq = seq;
  if (type == RTM_GETLINK) request.body.link.ifi_family = family;
  else if (type == RTM_GETADDR) request.body.address.ifa_family = family;
  else request.body.route.rtm_family = family;
  struct sockaddr_nl kernel;
  memset(&kernel, 0, sizeof kernel);
  kernel.nl_family = AF_NETLINK;
  ssize_t sent = sendto(fd, &request, request.header.nlmsg_len, 0, (struct sockaddr *)&kernel,
                        sizeof kernel);
  if (sent < 0) return -errno;
  return 0;
}

ssize_t courier_nl_recv(int fd, void *buffer, size_t length, uint32_t *sender_pid,
                        int *truncated) {
  struct sockaddr_nl from;
  memset(&from, 0, sizeof from);
  struct iovec vector = {.iov_base = buffer, .iov_len = length};
  struct msghdr message;
  memset(&message, 0, sizeof message);
  message.msg_name = &from;
  message.msg_namelen = sizeof from;
  message.msg_iov = &vector;
  message.msg_iovlen = 1;
  ssize_t received = recvmsg(fd, &message, MSG_DONTWAIT);
  if (received < 0) return -errno;
  *sender_pid = from.nl_pid;
  *truncated = (message.msg_flags & MSG_TRUNC) ? 1 : 0;
  return received;
}

int courier_nl_rcvbuf(int fd) {
  int value = 0;
  socklen_t size = sizeof value;
  if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, &size) != 0) return -errno;
  return value;
}

int courier_eventfd_open(void) {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

int courier_eventfd_signal(int fd) { return eventfd_write(fd, 1) == 0 ? 0 : -errno; }

int courier_wait(int fd, int wake_fd, int timeout_ms) {
  struct pollfd fds[2] = {{.fd = fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
  for (;;) {
    int ready = poll(fds, 2, timeout_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (ready == 0) return 0;
    if (fds[1].revents) return 2;
    return 1;
  }
}

int courier_setns_net(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  int result = setns(fd, CLONE_NEWNET);
  int error = errno;
  close(fd);
  return result == 0 ? 0 : -error;
}

int courier_nl_send_to_groups(int fd, uint32_t groups, const void *bytes, size_t length) {
  struct sockaddr_nl to;
  memset(&to, 0, sizeof to);
  to.nl_family = AF_NETLINK;
  to.nl_groups = groups;
  if (sendto(fd, bytes, length, 0, (struct sockaddr *)&to, sizeof to) < 0) return -errno;
  return 0;
}

void courier_close(int fd) { close(fd); }
