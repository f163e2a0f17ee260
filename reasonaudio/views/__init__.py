"""Everything the command line shows: rich tables, progress bars, one-line notes.

Library code never prints; it returns values and reports through the
:class:`reasonaudio.progress.Hooks` it is given. Every user-supplied string printed here goes through
rich ``Text`` (or ``escape``) so it is never read as markup.
"""
