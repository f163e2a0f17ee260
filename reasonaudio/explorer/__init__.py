"""`bench serve`: a local, read-only web explorer over one benchmark and its saved results.

A view like ``views/``, over the same library: :mod:`catalog` gathers what the pages show
(results, runs, ranks, minimal pairs, captions, detected events, searches), :mod:`audio_cache`
renders clips on demand, :mod:`ranges` reads HTTP Range headers, :mod:`webapp` is the Starlette
application with its Jinja templates, :mod:`server` binds the socket and runs uvicorn.
"""
