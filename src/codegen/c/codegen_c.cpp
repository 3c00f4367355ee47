// Replaced by the C back end.
