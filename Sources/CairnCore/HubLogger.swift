// The domain's loggers: one label per concern, so an operator can raise one without the rest.
package import Logging

/// Messages about the hub's own work (snapshots, purges, shutdown).
package let hubLogger = Logger(label: "cairn.hub")
