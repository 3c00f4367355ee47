// Replaced by the LLVM back end.
