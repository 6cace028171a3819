"""One module per backend holding the frontend's functions for that framework.

Each module imports its framework at its own import (which happens on first use of the
backend only) and calls the framework's callables through their module attributes at
call time (``torch.sum``, ``tf.math.reduce_sum``), so a traced graph of frontend code
holds the backend's own calls, and an interceptor that wraps those attributes sees them.
Every module defines the same functions with the same signatures as
:mod:`ivytrace.frontend.functions`, plus ``name`` and ``native`` (the framework module).
"""
