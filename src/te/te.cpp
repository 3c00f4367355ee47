// Replaced by the tensor-expression implementation.
