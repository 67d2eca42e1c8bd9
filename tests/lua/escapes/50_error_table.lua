-- attack: error({}) with a non-string error object.
-- defense: the host reports what it is.
-- expect: (error object is a table value)
error({ code = 42 })
