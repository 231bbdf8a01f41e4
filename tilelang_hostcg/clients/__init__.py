"""What every compiler client shares: the :class:`._interface.Client` interface, the integration
point checked by shape (:mod:`._point`), and the one routing answer (:mod:`._routing`). The
clients themselves are :mod:`tilelang_hostcg.tilelang` and :mod:`tilelang_hostcg.tvm`."""
