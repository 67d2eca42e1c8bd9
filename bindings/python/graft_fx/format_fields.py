"""The graph file's fields: each object's keys, whether each is required, in the order files
write them. Generated from engine/include/graft/io/format_fields.hpp by
tools/gen_format_fields.py: edit the header, not this file (a test fails when they differ)."""

DOCUMENT_FIELDS = (
    ("format", True),
    ("version", True),
    ("meta", True),
    ("modules", True),
    ("nodes", True),
)

NODE_FIELDS = (
    ("name", True),
    ("op", True),
    ("target", True),
    ("args", True),
    ("kwargs", True),
    ("meta", True),
)

TENSOR_META_FIELDS = (
    ("shape", True),
    ("dtype", True),
    ("stride", True),
    ("device", True),
)

TENSOR_SPEC_FIELDS = (
    ("name", True),
    ("shape", True),
    ("dtype", True),
    ("data", False),
    ("stride", False),
    ("device", False),
)

MODULE_FIELDS = (
    ("path", True),
    ("class", True),
    ("parameters", True),
    ("buffers", True),
    ("attributes", False),
    ("origin", False),
    ("opaque", False),
    ("graph", False),
)

MODULE_GRAPH_FIELDS = (
    ("nodes", True),
)


def required(fields):
    """The keys every object of this kind has."""
    return tuple(key for key, needed in fields if needed)


def optional(fields):
    """The keys an object of this kind may have."""
    return tuple(key for key, needed in fields if not needed)
