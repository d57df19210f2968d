// The `CourierLinux` product: the composition root with the Linux defaults. Importing it
// imports `Courier` (domain, ports, use cases) too.
@_exported import Courier
// CourierSession.swift, being split by use case (issue 23 item 4), uses LogText without
// importing the shared system target; this re-export stands in for that import until then.
// CourierSystem declares nothing public, so a user of the product sees nothing more.
@_exported import CourierSystem
