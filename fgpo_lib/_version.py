"""The package version, in a module of its own so that submodules can import it without importing the package."""

__version__ = "0.1.0"


def code_version() -> str:
    """``fgpo <version> (<git commit>)`` of the code running now (the commit when run from a git checkout)."""
    import subprocess
    from pathlib import Path

    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return f"fgpo {__version__}" + (f" ({rev})" if rev else "")
