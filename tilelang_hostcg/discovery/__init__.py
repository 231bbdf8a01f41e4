"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources, in one
``importlib.metadata`` scan (no cache) that imports nothing of the registry; :mod:`._planning` is
its interface. Imports only :mod:`..core` and :mod:`..environment`."""
