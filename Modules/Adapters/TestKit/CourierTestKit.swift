// The `CourierTestKit` product: fakes for tests. The in-memory adapters (transport, local
// store, path monitor) live in `CourierMemory`, which production may also select by config;
// importing the test kit imports them too.
@_exported import CourierMemory
