// The peer of an offline write: start a process, append 256 bytes to a file, fdatasync it,
// exit. What `courier articles add` with no usable path needs at the least.
//
//   fsync-peer FILE
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc != 2) return 64;
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 74;
  char record[256];
  memset(record, 'x', sizeof record);
  record[sizeof record - 1] = '\n';
  if (write(fd, record, sizeof record) != (ssize_t)sizeof record) return 74;
  if (fdatasync(fd) != 0) return 74;
  return close(fd) == 0 ? 0 : 74;
}
