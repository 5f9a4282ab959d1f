"""Parts of gradgen.nn.functional by family (activation, distance, margin losses,
conv, pooling, padding), written with gradgen's operators; gradgen.nn.functional
re-exports them."""
