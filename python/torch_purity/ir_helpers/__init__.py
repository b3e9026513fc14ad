"""One home for small MLIR helpers shared by the importer, the passes and the
driver: function/argument/result attributes, Torch constants and static
sizes, element types, read-only queries. No pass logic lives here."""
