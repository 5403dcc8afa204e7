"""Shell frontend: the simple commands of a shell script, Makefile recipe or sbatch file.

The script is parsed once with tree-sitter-bash and walked once, in file order,
with a small model of the shell's variables, so that every command comes out as
argv :class:`~flake8_replayssm.model.Word` objects (quotes removed, same-file
variables resolved, unknowns marked) plus the environment it runs with.  The
vLLM meaning of the words is :mod:`flake8_replayssm.argv`'s business.

What is resolved, and what is left unknown (precision first):

- literal words, ``'...'``, ``"..."``, ``$'...'``, backslash escapes;
- ``$VAR`` / ``${VAR}`` assigned earlier in the file to a value that is the same
  on every path seen so far (``VAR=x``, ``export``/``declare``/``local``/
  ``readonly``); a later assignment on the same straight-line path replaces an
  earlier one; an assignment inside a branch, loop, ``&&``/``||`` arm or
  function makes the variable unknown unless every assignment agrees (an
  ``if``/``else`` or a ``case`` with ``*)`` counts as exhaustive);
- ``${VAR:-x}`` / ``${VAR-x}`` / ``${VAR:+x}`` when VAR itself is known; when VAR
  is never assigned in the file (``${1:-x}``, ``${MODEL:-x}`` left to the caller)
  the default ``x`` is taken, as the script's own choice; a plain ``$1`` or
  ``$MODEL`` from the caller's environment is unknown;
- literal arrays ``A=(...)`` / ``A+=(...)`` expanded by ``"${A[@]}"``, each word
  placed on its element in the array assignment;
- ``variables`` given by the caller (Dockerfile ``ENV``, compose
  ``environment``...) are known values in the environment (``None``: set, value
  unknown); values may be ``str``, ``None`` or a :class:`Word` (then placed).
- ``source`` of anything but an environment activation script, ``eval`` of an
  unknown string and ``export $(...)`` may set any variable: what was known
  before becomes unknown and later commands get ``env_open_ended``.

A word that is wholly unknown has ``text=None``; a word with a literal part and
an unknown part keeps the literal and has :data:`~flake8_replayssm.model.UNKNOWN_PART`
where the unknown part is (``--port=\\x00``, ``VLLM_X=\\x00``), which
:mod:`flake8_replayssm.argv` treats as not static.  ``splat`` is set for a word
that may expand to any number of words: an unquoted unknown expansion,
``"$@"``, ``"${A[@]}"`` of an unknown array, an unquoted ``$(...)``.

``bash -c STRING`` / ``sh -c`` and ``eval STRING`` with a known string are parsed
again as shell (positions mapped back into the file, exactly where the
string's characters are written in the file); a ``bash`` reading a here-document
is too.  The words in front of the shell (``nohup``, ``srun ...``) are kept in
front of each inner command so that argv.py still sees the wrappers.

Nothing here raises: broken parts of a script (tree-sitter ``ERROR`` nodes) are
skipped, the rest is still read.

The modules, from the bottom up:

- :mod:`.located`: strings whose characters know where they are in the file;
- :mod:`.parsing`: tree-sitter set-up, one parsed text's positions, syntax errors (RSM900);
- :mod:`.values`, :mod:`.choices`, :mod:`.scope`: a word's and a variable's value, value
  sets (``if``/``case``), the variables of one shell process;
- :mod:`.context`: what every text of one input shares, the nesting bound;
- :mod:`.fields`, :mod:`.literals`, :mod:`.parameters`, :mod:`.words`: word expansion;
- :mod:`.assignments`: what assignments and ``declare``/``export``/``read`` do;
- :mod:`.heredocs`: here-documents, the files they write, the manifests they hold;
- :mod:`.commands`: a simple command's words and environment, builtins, ``bash -c``,
  ``eval``, ``ssh``, ``#SBATCH --export``;
- :mod:`.control`: the walk over statements (``if``/``case``/loops/functions);
- :mod:`.script`: the entry point and the wiring of one text's walk;
- :mod:`.makefile`: Makefile recipes.
"""

from .makefile import commands_in_makefile
from .parsing import new_parser, shell_syntax_errors
from .script import commands_in_shell

__all__ = ["commands_in_makefile", "commands_in_shell", "new_parser", "shell_syntax_errors"]
