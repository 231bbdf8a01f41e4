"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources.

It imports nothing of the registry. :mod:`._planning` is its interface (what the registry
loads); :mod:`._records`, :mod:`._controls`, :mod:`._requirements` and :mod:`._scan` (the one
``importlib.metadata`` scan) hold the rest. Every discovery is one scan: there is no cache."""
