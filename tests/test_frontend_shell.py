"""The shell frontend: commands of shell scripts, sbatch files and Makefile recipes as argv words."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flake8_replayssm.frontends.shell import script as shell_script
from flake8_replayssm.frontends.shell import commands_in_makefile, commands_in_shell
from flake8_replayssm.model import UNKNOWN, UNKNOWN_PART, Command, Span, Word

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "shell"
NANO = "nvidia/NVIDIA-Nemotron-Nano-9B-v2"


@pytest.fixture(autouse=True)
def strict(monkeypatch):
    """Internal errors surface in tests instead of being swallowed."""
    monkeypatch.setattr(shell_script, "STRICT", True)


def cmds(text: str, **kw) -> list[Command]:
    return commands_in_shell(textwrap.dedent(text), **kw)


def only(text: str, **kw) -> Command:
    found = cmds(text, **kw)
    assert len(found) == 1, [texts(c) for c in found]
    return found[0]


def texts(c: Command) -> list[str | None]:
    return [w.text for w in c.words]


def at(w: Word) -> tuple[int, int, int, int]:
    return (w.span.line, w.span.col, w.span.end_line, w.span.end_col)


# --------------------------------------------------------------------------
# words and spans
# --------------------------------------------------------------------------

def test_multiline_launch_words_spans_and_env_prefixes():
    src = (
        "#!/bin/bash\n"
        f"MODEL={NANO}\n"
        "CUDA_VISIBLE_DEVICES=0,1 \\\n"
        "  VLLM_USE_V2_MODEL_RUNNER=0 \\\n"
        '  vllm serve "$MODEL" \\\n'
        "  --use-replayssm \\\n"
        "  --mamba-backend triton\n"
    )
    c = only(src)
    assert texts(c) == ["vllm", "serve", NANO, "--use-replayssm", "--mamba-backend", "triton"]
    assert [at(w) for w in c.words] == [
        (5, 2, 5, 6), (5, 7, 5, 12), (5, 13, 5, 21),   # the model on the quoted "$MODEL" word
        (6, 2, 6, 17), (7, 2, 7, 17), (7, 18, 7, 24)]
    assert not any(w.splat for w in c.words)
    # only VLLM_* prefixes (and caller variables) are part of env; placed on the value
    assert set(c.env) == {"VLLM_USE_V2_MODEL_RUNNER"}
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"
    assert at(c.env["VLLM_USE_V2_MODEL_RUNNER"]) == (4, 27, 4, 28)
    assert c.env_open_ended is False


def test_quote_removal_and_escapes():
    c = only(r"""vllm serve 'a b' "c \"d\" \$e \q" $'t\tu\'v' x\ y pre"mid"'post' --n=3 """)
    assert texts(c) == ["vllm", "serve", "a b", 'c "d" $e \\q', "t\tu'v", "x y", "premidpost", "--n=3"]
    assert at(c.words[2]) == (1, 11, 1, 16)          # quotes included in the span
    assert at(c.words[6]) == (1, 50, 1, 64)


def test_json_flag_split_over_lines_keeps_newlines():
    c = only("""\
        vllm serve m \\
          --speculative-config '{"method": "mtp",
            "num_speculative_tokens": 2}'
        """)
    assert c.words[-1].text == '{"method": "mtp",\n    "num_speculative_tokens": 2}'
    assert at(c.words[-1]) == (2, 23, 3, 33)


def test_non_ascii_before_a_word_gives_character_columns():
    # "é" and "模型" are 2 and 6 bytes in UTF-8; columns count characters
    c = only('M="é/模型"; echo ü; vllm serve "$M" --tokenizer ü --use-replayssm\n')
    assert texts(c) == ["vllm", "serve", "é/模型", "--tokenizer", "ü", "--use-replayssm"]
    assert at(c.words[0]) == (1, 18, 1, 22)
    assert at(c.words[2]) == (1, 29, 1, 33)          # "$M" with its quotes
    assert at(c.words[4]) == (1, 46, 1, 47)
    assert at(c.words[5]) == (1, 48, 1, 63)


def test_place_maps_positions_into_the_enclosing_file():
    def place(sr, sc, er, ec):
        return Span(sr + 11, sc + 4, er + 11, ec + 4, cell=2)

    c = only("vllm serve m --use-replayssm\n", place=place)
    assert c.words[3].span == Span(11, 17, 11, 32, cell=2)


def test_base_dir_is_copied():
    assert only("vllm serve ./ckpt\n", base_dir="/srv/app").base_dir == "/srv/app"


# --------------------------------------------------------------------------
# variables
# --------------------------------------------------------------------------

def test_literal_variable_unquoted_and_braced():
    c = only(f"MODEL={NANO}\nPORT=8000\nvllm serve $MODEL --port ${{PORT}}\n")
    assert texts(c) == ["vllm", "serve", NANO, "--port", "8000"]
    assert at(c.words[2]) == (3, 11, 3, 17)


def test_default_expansion_uses_the_known_value_else_the_scripts_default():
    c = only("""\
        M=org/known
        E=
        vllm serve ${M:-other} --a ${E:-fallback} --b ${NEVER:-x} --c "${1:-y}" --d ${M:+set} --e $2
        """)
    assert texts(c) == ["vllm", "serve", "org/known", "--a", "fallback", "--b", "x", "--c", "y",
                        "--d", "set", "--e", None]
    assert c.words[12].splat is True     # unquoted $2: may be several words


def test_self_default_assignment_takes_the_default():
    c = only(f'export MODEL="${{MODEL:-{NANO}}}"\nvllm serve "$MODEL"\n')
    assert c.words[2].text == NANO


def test_a_branch_gives_a_variable_a_set_of_values_and_the_command_is_read_once_per_value():
    found = cmds("""\
        M=a
        if [ -n "$BIG" ]; then M=b; fi
        vllm serve "$M"
        """)
    assert sorted(c.words[2].text for c in found) == ["a", "b"]
    assert found[0].group is not None and found[0].group == found[1].group
    assert all(c.words[2].span == found[0].words[2].span for c in found)  # the "$M" word


def test_a_branch_that_exits_sets_nothing_seen_after_it():
    found = cmds("""\
        case "$SIZE" in
          small) M=org/small ;;
          big) M=org/big ;;
          *) echo "unknown size"; exit 1 ;;
        esac
        vllm serve $M
        """)
    assert sorted(c.words[2].text for c in found) == ["org/big", "org/small"]


def test_too_many_combinations_are_unknown():
    script = "".join(f'if [ "$A{k}" ]; then V{k}=x{k}; else V{k}=y{k}; fi\n' for k in range(5))
    found = cmds(script + "vllm serve $V0 $V1 $V2 $V3 $V4\n")
    assert len(found) == 1 and found[0].words[2].text is None


def test_straight_line_reassignment_and_agreeing_branches_are_known():
    found = cmds("""\
        M=a
        M=b
        vllm serve $M
        if [ "$X" ]; then N=k; else N=k; fi
        case "$1" in a) C=z ;; *) C=z ;; esac
        vllm serve $N $C
        [ -z "$P" ] && P=default
        vllm serve $P
        if [ -z "$Q" ]; then Q=fallback; fi
        vllm serve $Q
        """)
    assert [texts(c) for c in found] == [
        ["vllm", "serve", "b"], ["vllm", "serve", "k", "z"], ["vllm", "serve", "default"],
        ["vllm", "serve", "fallback"]]  # `[ -z "$P" ] && P=x` is a default, the script's own choice


def test_positional_parameters_are_unknown():
    c = only('vllm serve $1 --port "$2"\n')
    assert [(w.text, w.splat) for w in c.words[2:]] == [(None, True), ("--port", False), (None, False)]


def test_assignment_after_the_command_does_not_count():
    assert texts(only("vllm serve $M\nM=late\n"))[2] is None


def test_function_local_value_and_function_side_effects():
    found = cmds(f"""\
        serve() {{
          local MODEL={NANO}
          vllm serve "$MODEL" --use-replayssm
        }}
        setup() {{ PORT=1; }}
        PORT=2
        vllm serve x --port $PORT
        """)
    assert texts(found[0])[2] == NANO
    assert texts(found[1])[4] is None   # setup may run before it


def test_calling_a_function_applies_what_it_assigns():
    c = only(f"""\
        setup_env() {{
          export VLLM_USE_V2_MODEL_RUNNER=0
          MODEL={NANO}
        }}
        setup_env
        vllm serve "$MODEL" --use-replayssm
        """)
    assert texts(c)[2] == NANO
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"
    assert at(c.env["VLLM_USE_V2_MODEL_RUNNER"]) == (2, 34, 2, 35)


def test_loop_variables_read_and_subshells_are_unknown():
    found = cmds("""\
        for M in "$@"; do vllm serve $M; done
        read -r R
        (S=inner)
        vllm serve $R $S
        """)
    assert texts(found[0])[2] is None
    assert texts(found[1])[2:] == [None, None]


def test_a_loop_over_listed_words_reads_the_body_once_per_word():
    found = cmds("for M in a 'b c'; do vllm serve $M; done\nvllm serve $M\n")
    assert [texts(c)[2:] for c in found] == [["a"], ["b", "c"], [None]]
    # each word is launched: its own launch, not one of a set of readings
    assert [c.group for c in found] == [None, None, None]
    # nested loops are read once per pair of words, up to the bound on readings
    pairs = cmds("for A in a b; do for B in x y; do vllm serve $A$B; done; done\n")
    assert [texts(c)[2] for c in pairs] == ["ax", "ay", "bx", "by"]
    deep = cmds("for A in a b c d; do for B in w x y z; do for C in 1 2; do vllm serve $A$B$C; done; done; done\n")
    assert len(deep) == 16 and {texts(c)[2][2:] for c in deep} == {UNKNOWN_PART}  # $C: unknown
    # too many words, or one the file does not show: unknown
    many = " ".join(f"m{i}" for i in range(20))
    assert texts(cmds(f"for M in {many}; do vllm serve $M; done\n")[0])[2] is None
    assert texts(cmds("for M in a $X; do vllm serve $M; done\n")[0])[2] is None


def test_caller_variables_are_known_and_in_env():
    c = only('vllm serve "$MODEL" --port $PORT\n',
             variables={"MODEL": NANO, "PORT": None,
                        "VLLM_USE_V2_MODEL_RUNNER": Word("0", Span(3, 4, 3, 5))})
    assert texts(c) == ["vllm", "serve", NANO, "--port", None]
    assert {k: w.text for k, w in c.env.items()} == {
        "MODEL": NANO, "PORT": None, "VLLM_USE_V2_MODEL_RUNNER": "0"}
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].span == Span(3, 4, 3, 5)  # the caller's place


# --------------------------------------------------------------------------
# arrays and splats
# --------------------------------------------------------------------------

def test_array_words_are_placed_on_their_elements():
    c = only("""\
        ARGS=(--max-model-len 4096   # comment inside the array
              "--served-model-name" 'a b')
        ARGS+=(--use-replayssm)
        vllm serve m "${ARGS[@]}" --tail
        """)
    assert texts(c) == ["vllm", "serve", "m", "--max-model-len", "4096", "--served-model-name", "a b",
                        "--use-replayssm", "--tail"]
    assert at(c.words[3]) == (1, 6, 1, 21)
    assert at(c.words[5]) == (2, 6, 2, 27)
    assert at(c.words[7]) == (3, 7, 3, 22)
    assert at(c.words[8]) == (4, 26, 4, 32)


def test_array_star_index_and_empty_array():
    c = only('A=(--a "b c")\nE=()\nvllm serve m "${A[*]}" ${A[1]} "${E[@]}" $A\n')
    assert texts(c) == ["vllm", "serve", "m", "--a b c", "b", "c", "--a"]


def test_conditionally_extended_array_is_either_value_and_an_unknown_array_a_splat():
    found = cmds("""\
        EXTRA=()
        if [ "$SPEC" = 1 ]; then EXTRA+=(--speculative-config '{"method":"mtp"}'); fi
        vllm serve m "${EXTRA[@]}" "${NEVER[@]}"
        """)
    assert sorted(([(w.text, w.splat) for w in c.words[3:]] for c in found), key=len) == [
        [(None, True)],
        [("--speculative-config", False), ('{"method":"mtp"}', False), (None, True)]]
    assert found[0].group == found[1].group


def test_an_array_extended_in_a_loop_is_a_splat():
    c = only("""\
        EXTRA=()
        for f in "$@"; do EXTRA+=(--lora "$f"); done
        vllm serve m "${EXTRA[@]}"
        """)
    assert [(w.text, w.splat) for w in c.words[3:]] == [(None, True)]


@pytest.mark.parametrize("assign,label", [
    ('ARGS=(--use-replayssm)\nARGS+=("$@")', '"$@"'),
    ("ARGS=(--use-replayssm $EXTRA_ARGS)", "$EXTRA_ARGS"),
    ('ARGS=(--use-replayssm "${EXTRA[@]}")', '"${EXTRA[@]}"'),
])
def test_an_array_keeps_its_known_elements_beside_an_unseen_one(assign, label):
    c = only(f'{assign}\nvllm serve m "${{ARGS[@]}}" "${{ARGS[*]}}"\n')
    assert [(w.text, w.splat, w.label) for w in c.words[3:]] == [
        ("--use-replayssm", False, None), (None, True, label), (None, False, '"${ARGS[*]}"')]


def test_pass_through_arguments_are_splats():
    c = only('exec vllm serve m "$@" $* "$*" $EXTRA_ARGS "$ONE"\n')
    assert [(w.text, w.splat) for w in c.words[4:]] == [
        (None, True), (None, True), (None, False), (None, True), (None, False)]


def test_unquoted_multi_word_variable_is_split_and_placed_in_its_assignment():
    c = only('FLAGS="--use-replayssm --mamba-backend triton"\nvllm serve m $FLAGS\n')
    assert texts(c)[3:] == ["--use-replayssm", "--mamba-backend", "triton"]
    assert at(c.words[3]) == (1, 7, 1, 22)
    assert at(c.words[5]) == (1, 39, 1, 45)


def test_partly_unknown_word_keeps_its_literal_part():
    c, e = cmds('vllm serve m --port=$PORT "--kv={\\"n\\": $N}"\nenv VLLM_X=$V vllm serve m\n')
    assert c.words[3].text == "--port=" + UNKNOWN_PART and c.words[3].splat
    assert c.words[4].text == '--kv={"n": ' + UNKNOWN_PART + "}" and not c.words[4].splat
    assert e.words[1].text == "VLLM_X=" + UNKNOWN_PART   # argv.py keeps the name, value unknown


def test_command_substitution_word_is_unknown_and_its_commands_are_found():
    found = cmds('HOST=$(hostname)\nvllm serve m --host "$(hostname -i)" $(cat args.txt)\n'
                 'PID=$(nohup vllm serve n > log 2>&1 & echo $!)\n')
    assert [(w.text, w.splat) for w in found[0].words[3:]] == [
        ("--host", False), (None, False), (None, True)]
    assert texts(found[1]) == ["nohup", "vllm", "serve", "n"]


# --------------------------------------------------------------------------
# what bash runs, and what it does not
# --------------------------------------------------------------------------

def test_commented_flag_line_ends_the_command_as_bash_does():
    found = cmds("""\
        vllm serve m \\
          --port 8000 \\
          # --enable-prefix-caching \\
          --use-replayssm
        """)
    assert [texts(c) for c in found] == [["vllm", "serve", "m", "--port", "8000"]]


def test_commented_line_inside_an_env_prefix_chain_ends_it_as_bash_does():
    # bash: `VLLM_USE_V1=1` becomes a shell variable (not exported); vllm runs without it
    c = only("""\
        SAFETENSORS_FAST_GPU=1 \\
        VLLM_USE_V2_MODEL_RUNNER=0 \\
        # VLLM_ATTENTION_BACKEND=FLASHINFER \\
        vllm serve m --use-replayssm
        """)
    assert texts(c) == ["vllm", "serve", "m", "--use-replayssm"]
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text is None   # set only if it was exported before


def test_echo_printf_comments_and_heredocs_are_not_commands():
    found = cmds("""\
        # vllm serve m --use-replayssm
        echo "vllm serve m --use-replayssm"
        printf 'run: vllm serve %s --use-replayssm\\n' m
        cat > cfg.yaml <<EOF
        vllm serve m --use-replayssm
        EOF
        grep -q vllm log.txt && echo vllm up
        : vllm serve m
        """)
    assert found == []


def test_commands_behind_operators_and_in_compound_statements():
    found = cmds("""\
        nohup vllm serve a > a.log 2>&1 &
        cd /srv && vllm serve b || exit 1
        vllm serve c | tee c.log
        (cd x; time vllm serve d)
        if true; then vllm serve e; elif false; then vllm serve f; else vllm serve g; fi
        while :; do vllm serve h; done
        case "$1" in run) vllm serve i ;; esac
        start() { uv run vllm serve j; }
        ! vllm serve k
        """)
    assert [texts(c) for c in found] == [
        ["nohup", "vllm", "serve", "a"], ["vllm", "serve", "b"], ["vllm", "serve", "c"],
        ["time", "vllm", "serve", "d"], ["vllm", "serve", "e"], ["vllm", "serve", "f"],
        ["vllm", "serve", "g"], ["vllm", "serve", "h"], ["vllm", "serve", "i"],
        ["uv", "run", "vllm", "serve", "j"], ["vllm", "serve", "k"]]


def test_docker_run_is_returned_whole():
    c = only("""\
        docker run --gpus all -e VLLM_USE_V2_MODEL_RUNNER=0 \\
          vllm/vllm-openai:v0.33.0 --model nvidia/Nemotron-H-8B-Base-8K --use-replayssm
        """)
    assert texts(c) == ["docker", "run", "--gpus", "all", "-e", "VLLM_USE_V2_MODEL_RUNNER=0",
                        "vllm/vllm-openai:v0.33.0", "--model", "nvidia/Nemotron-H-8B-Base-8K",
                        "--use-replayssm"]
    assert c.image is None


def test_api_server_module_launch():
    c = only("python3 -m vllm.entrypoints.openai.api_server --model=m --use-replayssm\n")
    assert texts(c)[:3] == ["python3", "-m", "vllm.entrypoints.openai.api_server"]


# --------------------------------------------------------------------------
# shells inside shells
# --------------------------------------------------------------------------

def test_bash_c_single_quoted_string_is_parsed_and_placed_exactly():
    c = only("nohup bash -lc 'VLLM_USE_V2_MODEL_RUNNER=0 vllm serve m --use-replayssm' > log &\n")
    assert texts(c) == ["nohup", "vllm", "serve", "m", "--use-replayssm"]  # wrappers kept in front
    assert at(c.words[1]) == (1, 43, 1, 47)
    assert at(c.words[4]) == (1, 56, 1, 71)
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"


def test_bash_c_double_quoted_string_with_outer_variables():
    c = only(f'M={NANO}\nsh -c "vllm serve $M --use-replayssm --port=$PORT"\n')
    assert texts(c) == ["vllm", "serve", NANO, "--use-replayssm", "--port=" + UNKNOWN_PART]
    assert c.words[4].splat   # the inner shell splits the unknown value again
    assert at(c.words[3]) == (2, 21, 2, 36)


def test_command_held_in_a_variable_and_run_by_bash_c_or_eval():
    found = cmds("""\
        CMD="vllm serve m --use-replayssm"
        bash -c "$CMD" &
        eval "$CMD --port 1"
        $CMD --x
        """)
    assert [texts(c) for c in found] == [
        ["vllm", "serve", "m", "--use-replayssm"],
        ["vllm", "serve", "m", "--use-replayssm", "--port", "1"],
        ["vllm", "serve", "m", "--use-replayssm", "--x"]]
    assert at(found[0].words[3]) == (1, 18, 1, 33)   # where the flag is written


def test_command_string_with_an_unknown_part_is_still_read():
    found = cmds("""\
        CMD="vllm serve ${MODEL_NAME} --port 8000 --use-replayssm"
        bash -c "${CMD}" &
        eval "$CMD"
        """)
    assert [texts(c) for c in found] == [["vllm", "serve", None, "--port", "8000", "--use-replayssm"]] * 2
    assert found[0].words[2].splat
    assert at(found[0].words[2]) == (1, 16, 1, 29)    # on ${MODEL_NAME}
    assert at(found[0].words[5]) == (1, 42, 1, 57)


def test_eval_of_an_unknown_string_may_change_anything():
    found = cmds('M=a\neval "$(conda shell.bash hook)"\nvllm serve $M\neval "$SETUP"\nvllm serve $M\n')
    assert [texts(c)[2] for c in found] == ["a", None]
    assert [c.env_open_ended for c in found] == [False, True]


def test_inner_shell_sees_exported_variables_only():
    c = only("""\
        export VLLM_USE_V2_MODEL_RUNNER=0
        LOCAL=x
        bash -c 'vllm serve "$LOCAL"'
        """)
    assert texts(c)[2] is None
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"


def test_bash_reading_a_heredoc_runs_it():
    c = only("""\
        bash -s <<'EOS'
        vllm serve m --use-replayssm
        EOS
        """)
    assert texts(c) == ["vllm", "serve", "m", "--use-replayssm"]
    assert at(c.words[3]) == (2, 13, 2, 28)


# --------------------------------------------------------------------------
# environment
# --------------------------------------------------------------------------

def test_env_from_exports_and_its_precision():
    found = cmds("""\
        export VLLM_USE_V2_MODEL_RUNNER=0
        export OTHER=1
        VLLM_PLAIN=1
        vllm serve a
        unset VLLM_USE_V2_MODEL_RUNNER
        vllm serve b
        """)
    a, b = found
    assert a.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"
    assert at(a.env["VLLM_USE_V2_MODEL_RUNNER"]) == (1, 32, 1, 33)
    assert "OTHER" not in a.env
    assert a.env["VLLM_PLAIN"].text is None   # not exported: in the env only if it already was
    assert "VLLM_USE_V2_MODEL_RUNNER" not in b.env


def test_env_set_in_a_function_is_unknown():
    c = only("""\
        export VLLM_USE_V2_MODEL_RUNNER=0
        v2() { export VLLM_USE_V2_MODEL_RUNNER=1; }
        vllm serve m
        """)
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text is None


def test_sourcing_an_env_file_opens_the_environment():
    found = cmds("""\
        M=a
        source .venv/bin/activate
        vllm serve $M
        set -a; source ./serving.env; set +a
        vllm serve $M
        """)
    assert texts(found[0])[2] == "a" and found[0].env_open_ended is False
    assert texts(found[1])[2] is None and found[1].env_open_ended is True


def test_prefix_assignments_see_each_other_but_not_the_words():
    c = only("A=1 VLLM_B=$A vllm serve $A\n")
    assert c.env["VLLM_B"].text == "1"
    assert texts(c)[2] is None


# --------------------------------------------------------------------------
# Makefiles
# --------------------------------------------------------------------------

MAKEFILE = (
    f"MODEL ?= {NANO}\n"                                     # 1
    "PORT := 8000\n"                                         # 2
    "FLAGS = --use-replayssm --mamba-backend triton\n"       # 3
    "export VLLM_USE_V2_MODEL_RUNNER = 0\n"                  # 4
    "ifdef DEBUG\n"                                          # 5
    "LEVEL = debug\n"                                        # 6
    "endif\n"                                                # 7
    "\n"                                                     # 8
    "serve: deps\n"                                          # 9
    '\t@echo "serving $(MODEL)"\n'                           # 10
    "\t@VLLM_LOGGING_LEVEL=INFO vllm serve $(MODEL) \\\n"    # 11
    "\t\t--port $(PORT) \\\n"                                # 12
    "\t\t$(FLAGS) --level $(LEVEL) --root $$HOME\n"          # 13
    "# a comment does not end the recipe\n"                  # 14
    "\t-uv run vllm serve ${MODEL} --x=$(shell nproc)\n"     # 15
    "quick: ; vllm serve $(MODEL) --use-replayssm\n"         # 16
)


def test_makefile_recipes_with_variables():
    found = commands_in_makefile(MAKEFILE, base_dir="/proj")
    assert [texts(c) for c in found] == [
        ["vllm", "serve", NANO, "--port", "8000", "--use-replayssm", "--mamba-backend", "triton",
         "--level", None, "--root", None],
        ["uv", "run", "vllm", "serve", NANO, "--x=" + UNKNOWN_PART],
        ["vllm", "serve", NANO, "--use-replayssm"]]
    first = found[0]
    assert at(first.words[0]) == (11, 26, 11, 30)
    assert at(first.words[2]) == (11, 37, 11, 45)     # on $(MODEL)
    assert at(first.words[4]) == (12, 9, 12, 16)      # on $(PORT)
    assert at(first.words[5]) == (3, 8, 3, 23)        # several words: where they are written
    assert first.words[9].splat and first.words[11].splat
    assert {k: w.text for k, w in first.env.items()} == {
        "VLLM_USE_V2_MODEL_RUNNER": "0", "VLLM_LOGGING_LEVEL": "INFO"}
    assert at(first.env["VLLM_USE_V2_MODEL_RUNNER"]) == (4, 34, 4, 35)
    assert all(c.base_dir == "/proj" for c in found)


def test_makefile_reassigned_and_caller_variables():
    text = "M = a\nM = b\nN ?= x\nserve:\n\tvllm serve $(M) $(N) $(O)\n"
    assert texts(commands_in_makefile(text)[0]) == ["vllm", "serve", "b", "x", None]
    caller = commands_in_makefile(text, variables={"N": "y", "O": "z"})[0]
    assert texts(caller) == ["vllm", "serve", "b", "y", "z"]
    assert caller.env["N"].text == "y"


def test_makefile_include_may_override_variables():
    text = "MODEL ?= a\n-include .env\nPORT := 1\nserve:\n\tvllm serve $(MODEL) --port $(PORT)\n"
    assert texts(commands_in_makefile(text)[0]) == ["vllm", "serve", None, "--port", "1"]


def test_makefile_without_vllm_is_not_parsed():
    assert commands_in_makefile("all:\n\techo hi\n") == []


# --------------------------------------------------------------------------
# robustness
# --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "",
    "vllm",
    "vllm serve \"unterminated",
    "vllm serve $(\n\nif then fi ))) ((\n",
    "vllm serve 'a\n",
    "\x00\x01vllm\xff serve",
    "vllm serve m \udcff\udcfe --use-replayssm",    # surrogate-escaped bytes from the caller
    "vllm " + "$(" * 3000 + "x" + ")" * 3000,
    "vllm " + "{ " * 2000 + "vllm serve x; " + "} " * 2000,
    "vllm " + "\"${X:-" * 500,
    "bash -c \"" * 40 + "vllm serve x",
])
def test_garbage_never_raises(text, monkeypatch):
    monkeypatch.setattr(shell_script, "STRICT", False)
    assert isinstance(commands_in_shell(text), list)
    assert isinstance(commands_in_makefile("a:\n\t" + text), list)


def test_random_bytes_never_raise(monkeypatch):
    import random

    monkeypatch.setattr(shell_script, "STRICT", False)
    rng = random.Random(7)
    for _ in range(200):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 400)))
        commands_in_shell("vllm serve " + data.decode("utf-8", "surrogateescape"))
        commands_in_shell("vllm serve " + data.decode("latin-1"))


def test_broken_part_is_skipped_and_the_rest_kept():
    # the launch runs on into the unreadable part: it may be cut short, so it is dropped
    found = cmds("vllm serve a )) --use-replayssm\nvllm serve b\n")
    assert [texts(c) for c in found] == [["vllm", "serve", "b"]]
    # tree-sitter wraps the whole file in an ERROR here; the complete commands are kept
    found = cmds("""\
        vllm serve a --x 'ok'
        if then fi )))
        vllm serve c --use-replayssm
        """)
    assert [texts(c) for c in found] == [["vllm", "serve", "a", "--x", "ok"],
                                         ["vllm", "serve", "c", "--use-replayssm"]]


def test_heredoc_first_line_quirks_of_tree_sitter_bash():
    found = cmds("""\
        cat <<EOF; echo done
        vllm serve not-a-command
        EOF
        cat > cfg.yaml <<EOF && vllm serve a
        model: x
        EOF
        cat <<'EOF' | bash
        vllm serve b --use-replayssm
        EOF
        vllm serve c
        """)
    # `<<EOF;` does not swallow the rest of the file (tree-sitter-bash#346)
    assert [texts(c) for c in found] == [["vllm", "serve", "a"],
                                         ["vllm", "serve", "b", "--use-replayssm"],
                                         ["vllm", "serve", "c"]]
    assert at(found[1].words[3]) == (8, 13, 8, 28)
    assert at(found[2].words[2]) == (10, 11, 10, 12)


def test_shell_fragments_fuzz_without_internal_errors():
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    pieces = st.sampled_from([
        "vllm", " serve", ' "$M"', " 'x y'", "$", "${", "}", "(", ")", "$(", "`", '"', "'", "\\\n",
        "\n", " ", ";", "&&", "||", "|", "&", "if ", " then ", " fi", "case ", " esac", ";;", " in ",
        "for ", " do ", " done", "<<EOF\n", "EOF\n", "#", "=", "A=", "ARR=(", '"${ARR[@]}"', "${X:-",
        "$@", "export ", "local ", "bash -c ", "eval ", "source ", "{ ", "[[", "]]", "((", "))", "é",
        "\t", "$'", "f() ", "nohup ", "--use-replayssm", " VLLM_X=1", "unset ", "read ", "set -a",
        "+=(", "${#", "$((", "<(", "$(vllm serve m)"])

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(pieces, max_size=40))
    def run(parts):
        text = "".join(parts)
        commands_in_shell(text, variables={"A": "vllm x", "B": None})
        commands_in_makefile("t:\n\t" + text.replace("\n", "\n\t"))

    run()


def test_speed_of_a_large_script():
    import time

    block = (FIXTURES / "serve_nemotron_h.sh").read_text()
    text = block * 200   # ~9000 lines, 200 launches
    start = time.perf_counter()
    found = commands_in_shell(text)
    assert len(found) == 200
    assert time.perf_counter() - start < 10   # generous: shared CI machines


# --------------------------------------------------------------------------
# end to end: argv.py on what this frontend finds
# --------------------------------------------------------------------------

def launches(path: Path):
    from flake8_replayssm.recognise import launch_from_command

    text = path.read_text()
    found = commands_in_makefile(text) if path.name == "Makefile" else commands_in_shell(text)
    return [launch for launch in map(launch_from_command, found) if launch is not None]


def test_e2e_nemotron_fixture():
    (launch,) = launches(FIXTURES / "serve_nemotron_h.sh")
    assert launch.entry == "serve"
    assert launch.model is not None and launch.model.value == "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"
    assert launch.options["use_replayssm"].value is True
    assert launch.options["mamba_backend"].value == "triton"
    assert launch.options["tensor_parallel_size"].value == 2
    assert launch.env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"
    assert launch.open_ended is False


def test_e2e_kimi_fixture_and_json_option():
    found = launches(FIXTURES / "serve_kimi_linear.sh")   # `vllm bench serve` is not a launch
    (launch,) = found
    assert launch.model.value == "moonshotai/Kimi-Linear-48B-A3B-Instruct"
    assert launch.options["speculative_config"].value == {"method": "mtp", "num_speculative_tokens": 2}
    assert launch.options["enable_prefix_caching"].value is True


def test_e2e_docker_run_and_unknown_model():
    from flake8_replayssm.recognise import launch_from_command

    (launch,) = launches(FIXTURES / "docker_run.sh")
    assert launch.release_hint == "0.33.0"
    assert launch.model.value == "nvidia/Nemotron-H-8B-Reasoning-128K"
    assert launch.env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"
    unknown = launch_from_command(only('vllm serve "$MODEL" --use-replayssm "${EXTRA[@]}"\n'))
    assert unknown.model.value is UNKNOWN and unknown.unseen == ['"${EXTRA[@]}"']
    assert unknown.open_ended is False  # judged as written unless extra-args = "open"


def test_e2e_makefile_fixture():
    found = launches(FIXTURES / "Makefile")
    assert [launch.options["mamba_backend"].value if "mamba_backend" in launch.options else None
            for launch in found] == ["flashinfer", None]
    assert found[1].env["VLLM_USE_V2_MODEL_RUNNER"].value == "0"
    assert all(launch.model.value == "nvidia/NVIDIA-Nemotron-Nano-12B-v2" for launch in found)


def test_e2e_comments_only_fixture_has_no_replayssm_launch():
    found = launches(FIXTURES / "comments_only.sh")
    assert [launch.model.value for launch in found] == ["nvidia/Nemotron-H-8B-Base-8K"]
    assert "use_replayssm" not in found[0].options


def test_an_sbatch_export_directive_is_in_the_environment_placed_on_its_value():
    c = only(f"#!/bin/bash\n#SBATCH --export=ALL,VLLM_USE_V2_MODEL_RUNNER=0,HF_HOME\nvllm serve {NANO}\n")
    assert c.env["VLLM_USE_V2_MODEL_RUNNER"].text == "0"
    assert at(c.env["VLLM_USE_V2_MODEL_RUNNER"]) == (2, 46, 2, 47)
