"""A griffe extension: dpol's numpy-style docstrings as mkdocstrings should read them.

mkdocs.yml loads it into mkdocstrings (``extensions``). It changes what is shown, never
what the package says, and keeps the strict build strict:

* **Sphinx roles** (``:class:`~dpol.counters.Counter```, ``:func:`make_counter```), which
  the docstrings use for the reader of ``help()``, become code spans (the last
  component after ``~``); Markdown would show the role itself.
* **Keywords forwarded through ``**kwargs``.** Counters and learners document the keywords
  they pass on to a common base (``bound``, ``epsilon``, ``seed``, ...) in their own
  Parameters section, as numpy style allows. griffe checks each documented parameter
  against the signature, and in a callable that takes ``**kwargs`` that check cannot tell
  a forwarded keyword from a stale one: its two warnings ("does not appear in the
  function signature", "no types or annotations") are dropped there, and only there.
* **Untyped groups of names** (``horizon, dim, bound`` then "See Counter"): griffe would
  give every name of the group the type and default of the first one it finds in the
  signature (``bound: int, required``); the group keeps no type and no default, and a
  group whose names wrap onto a second line is read as one group.
"""

from __future__ import annotations

import logging
import re

import griffe

#: the griffe warnings that a documented forwarded keyword raises
_FORWARDED = re.compile(r"^(?:griffe: )?(?P<file>.+?):(?P<line>\d+): (Parameter '[^']+' does "
                        r"not appear in the function signature|No types or annotations for "
                        r"parameters )")
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):`(~?)([^`]+)`")
_NAMES = r"\w+(?:, \w+)*"
#: a group of names wrapped onto a second line: "a, b,\n    c, d" (same indentation)
_WRAPPED = re.compile(rf"^([ \t]*)({_NAMES},)[ \t]*\n\1({_NAMES})[ \t]*$", re.M)
#: a group of several names without a type: "a, b, c" alone on its line
_UNTYPED_GROUP = re.compile(r"^[ \t]*(\w+(?:, \w+)+)[ \t]*$", re.M)
#: the Parameters section of a numpy docstring, up to the next section or the end
_PARAMETERS = re.compile(r"^[ \t]*Parameters\n[ \t]*-+\n(.*?)(?=^[ \t]*\w[\w ]*\n[ \t]*-+\n|\Z)",
                         re.M | re.S)


def _code_span(match: re.Match) -> str:
    target = match.group(2).strip()
    return f"`{target.rsplit('.', 1)[-1] if match.group(1) else target}`"


class DpolDocstrings(griffe.Extension, logging.Filter):
    """Sphinx roles as code spans, forwarded keywords excused, untyped groups untyped."""

    def __init__(self) -> None:
        super().__init__()
        self._forwarding: dict[str, list[tuple[int, int]]] = {}  # file -> docstring lines
        # mkdocstrings routes griffe's messages to this logger; its --strict counts them
        logging.getLogger("mkdocs.plugins.griffe").addFilter(self)

    def _rewrite(self, obj) -> None:
        docstring = obj.docstring
        if docstring is None:
            return
        docstring.value = _WRAPPED.sub(r"\1\2 \3", _ROLE.sub(_code_span, docstring.value))

    def _callable(self, obj) -> None:
        self._rewrite(obj)
        docstring = obj.docstring
        if docstring is None:
            return
        try:
            forwards = any(p.kind is griffe.ParameterKind.var_keyword for p in obj.parameters)
        except (AttributeError, griffe.AliasResolutionError):
            forwards = False
        if forwards and docstring.lineno is not None:
            self._forwarding.setdefault(str(obj.relative_filepath), []).append(
                (docstring.lineno, docstring.endlineno or docstring.lineno))
        parameters = _PARAMETERS.search(docstring.value)
        grouped = {name for group in _UNTYPED_GROUP.findall(parameters.group(1))
                   for name in group.split(", ")} if parameters else set()
        if not grouped:
            return
        for section in docstring.parsed:  # parsed once here; mkdocstrings reads this parse
            if section.kind is griffe.DocstringSectionKind.parameters:
                for parameter in section.value:
                    if parameter.name in grouped:
                        parameter.annotation = None
                        parameter.value = None

    def on_module(self, *, mod, **kwargs) -> None:
        self._rewrite(mod)

    def on_attribute(self, *, attr, **kwargs) -> None:
        self._rewrite(attr)

    def on_function(self, *, func, **kwargs) -> None:
        self._callable(func)

    def on_class(self, *, cls, **kwargs) -> None:
        self._callable(cls)  # merge_init_into_class: the class docstring documents __init__

    def filter(self, record: logging.LogRecord) -> bool:
        found = _FORWARDED.match(record.getMessage())
        if found is None:
            return True
        line = int(found["line"])
        return not any(start <= line <= end
                       for start, end in self._forwarding.get(found["file"], ()))
