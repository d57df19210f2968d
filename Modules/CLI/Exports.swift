// The article and record commands, being split by use case (issue 23 item 4), use LogText and
// RFC3339 without importing the shared system target; this re-export stands in for that import
// in every file of the module until then.
@_exported import CourierSystem
