// The `Courier` product: domain values, ports and use cases in one import. Pure Swift, no C
// library; adapters come in their own products (CourierCurl, CourierSQLite, …) and the Linux
// composition root in `CourierLinux`.
@_exported import CourierCore
@_exported import CourierDomain
@_exported import CourierPorts
// The transport port speaks swift-http-types (`HTTPRequest`, `HTTPResponse`, `HTTPFields`;
// decision 2201): one import gives a user both.
@_exported import HTTPTypes
