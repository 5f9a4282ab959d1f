"""Parts of gradgen.nn.functional by family (activation, distance, margin losses),
written with gradgen's operators; gradgen.nn.functional re-exports them."""
