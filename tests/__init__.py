"""The test suite, a package: test modules import shared helpers as `tests.<module>`.

pytest puts the repository root on sys.path for it (rootdir-based imports), so no test edits
sys.path; `gameforge` itself always comes from the installed (editable) package.
"""
