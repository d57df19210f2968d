// SHA-256 block compression with the x86 SHA extensions (SHA-NI), behind a run-time check of
// the CPU, for SHANIFileHasher (decision 1303). No compiler flag is needed: the function that
// uses the instructions carries its own target attribute, and nothing calls it unless
// courier_sha256_ni_available() said yes. On other CPUs it is absent and says no.
#ifndef COURIER_SHA_NI_H
#define COURIER_SHA_NI_H

#include <stddef.h>
#include <stdint.h>

/// 1 when this CPU has the SHA extensions and SSE4.1 (CPUID), else 0 (also on non-x86).
int courier_sha256_ni_available(void);

/// Runs SHA-256's compression on `blocks` 64-byte blocks at `data`, updating `state` (the
/// eight 32-bit words a, b, ... h, in FIPS 180-4 order). Only when available.
void courier_sha256_ni_blocks(uint32_t state[8], const uint8_t *data, size_t blocks);

#endif
