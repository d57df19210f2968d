// The `CourierLinux` product: the composition root with the Linux defaults. Importing it
// imports `Courier` (domain, ports, use cases) too.
@_exported import Courier
