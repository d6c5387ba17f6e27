// The ports through which the hub meets the outside world now live in `CairnLoop` (connection ids, the loop
// scheduler, outbound bytes), shared with the transport without it knowing the hub.
@_exported import CairnLoop
