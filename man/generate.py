#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates the man pages and the bash completions from the tools themselves, so that they
say what --help says (one source: the tools' option tables and runtime/config/vars.def):
  sluice.1        from `sluice --help`
  sluice-ckpt.1   from `sluice-ckpt --help` and `sluice-ckpt COMMAND --help`
  sluice-trace.1  from `sluice-trace --help` and `sluice-trace COMMAND --help`
  sluice.7        from `sluice --list-variables` (the variables, as in docs/ENV.md)
  completions/sluice, sluice-ckpt, sluice-trace  (bash)

usage: generate.py BINDIR VERSION MANDIR COMPLETIONDIR
"""
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^ {2,6}(?:(-\w), )?(--[\w-]+)(?:[ =]([^ ]+))?(?: {2,}(.*))?$")
SHORT_ONLY = re.compile(r"^ {2,6}(-\w)(?: ([^ -][^ ]*))?(?: {2,}(.*))?$")
DATE = "2026"


def run(*argv):
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return out.rstrip("\n").split("\n")


def esc(text):
    """roff-safe text: backslashes, hyphens, and lines starting with a control character."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def parse_help(lines):
    """(usage, paragraphs, options, commands) from a --help text. Options are
    (short, long, metavar, [description lines]); commands are (name, summary)."""
    usage, text, options, commands = None, [], [], []
    section = None
    for line in lines:
        if line.startswith("usage: "):
            usage = line[len("usage: "):]
            continue
        if line.strip() == "commands:":
            section = "commands"
            continue
        if line.strip() == "options:":
            section = "options"
            continue
        m = OPTION.match(line)
        if m and (m.group(4) or section == "options"):
            options.append([m.group(1), m.group(2), m.group(3), [m.group(4)] if m.group(4) else []])
            section = "options"
            continue
        if section == "commands":
            cm = re.match(r"^  (\w[\w-]*) +(.*)$", line)
            if cm:
                commands.append((cm.group(1), cm.group(2)))
                continue
            section = None
        if options and section == "options" and line.startswith(" " * 8) and line.strip():
            options[-1][3].append(line.strip())
            continue
        section = None if not line.strip() else section
        text.append(line.strip())
    paragraphs, cur = [], []
    for t in text:
        if t:
            cur.append(t)
        elif cur:
            paragraphs.append(cur)
            cur = []
    if cur:
        paragraphs.append(cur)
    return usage, paragraphs, options, commands


def roff_options(options):
    out = []
    for short, long, metavar, desc in options:
        head = (f"\\fB{esc(short)}\\fR, " if short else "") + f"\\fB{esc(long)}\\fR"
        if metavar:
            head += f" \\fI{esc(metavar)}\\fR"
        out += [".TP", head]
        for k, d in enumerate(desc):
            if k and d.startswith("SLUICE_"):  # the launcher's "variable: accepts; default" line
                out.append(".br")
            out.append(esc(d))
    return out


def roff_paragraphs(paragraphs):
    out = []
    for p in paragraphs:
        out.append(".PP")
        for line in p:
            if line.startswith(("mpiexec ", "srun ")):
                out += [".RS", ".nf", esc(line), ".fi", ".RE"]
            else:
                out.append(esc(line))
    return out


def header(name, section, version, summary):
    return [f'.TH {name.upper()} {section} "{DATE}" "sluice {version}" "sluice manual"',
            ".SH NAME", f"{esc(name)} \\- {esc(summary)}"]


def see_also(exclude):
    pages = [("sluice", 1), ("sluice-ckpt", 1), ("sluice-trace", 1), ("sluice", 7)]
    refs = [f"\\fB{esc(n)}\\fR({s})" for n, s in pages if (n, s) != exclude]
    return [".SH SEE ALSO", ", ".join(refs) + ",", "\\fBmpiexec\\fR(1), \\fBsrun\\fR(1)"]


def launcher_page(bindir, version):
    usage, paragraphs, options, _ = parse_help(run(f"{bindir}/sluice", "--help"))
    lines = header("sluice", 1, version, "run a program with libsluice.so preloaded")
    lines += [".SH SYNOPSIS", f"\\fB{esc(usage)}\\fR", ".SH DESCRIPTION"] + roff_paragraphs(paragraphs[:-1])
    lines += [".SH OPTIONS"] + roff_options(options)
    lines += [".SH EXIT STATUS", "2 for a usage error or an invalid value (every rank; the job's first rank",
              "prints the one line), 126 or 127 when the program cannot be run, else the program's own."]
    lines += see_also(("sluice", 1))
    return "\n".join(lines) + "\n", options


def tool_page(bindir, tool, version, summary):
    usage, paragraphs, _, commands = parse_help(run(f"{bindir}/{tool}", "--help"))
    lines = header(tool, 1, version, summary)
    lines += [".SH SYNOPSIS", f"\\fB{esc(usage)}\\fR", ".SH DESCRIPTION"] + roff_paragraphs(paragraphs)
    lines.append(".SH COMMANDS")
    per_command = {}
    for name, csummary in commands:
        cusage, cpars, copts, _ = parse_help(run(f"{bindir}/{tool}", name, "--help"))
        per_command[name] = copts
        lines += [f".SS {esc(name)}", f"\\fB{esc(cusage or name)}\\fR", ".PP", esc(csummary)]
        lines += roff_paragraphs(cpars)
        if copts:
            lines += [".PP", "Options:"] + roff_options(copts)
    lines += see_also((tool, 1))
    return "\n".join(lines) + "\n", per_command


def variables_page(bindir, version):
    lines = header("sluice", 7, version, "the SLUICE_* environment variables")
    lines += [".SH DESCRIPTION",
              "sluice is configured only through \\fBSLUICE_*\\fR environment variables, or the options of",
              "\\fBsluice\\fR(1), which set the same variables. Every variable is read once, when the",
              "library loads, before \\fBmain\\fR. An invalid value stops the program before \\fBmain\\fR",
              "with one line on stderr naming the variable, the value and what is accepted, and exit",
              "status 2. An unknown \\fBSLUICE_*\\fR name is a warning naming the nearest known one. With",
              "no \\fBSLUICE_*\\fR variable set the library is inert.",
              ".PP",
              "Sizes are a decimal number with an optional binary suffix: K, M, G, T, also written KB/KiB,",
              "MB/MiB, ... (powers of 1024, case-insensitive).",
              ".SH VARIABLES"]
    for row in run(f"{bindir}/sluice", "--list-variables"):
        name, option, letter, metavar, default, accepts, text = row.split("\t")
        opt = (f"\\fB\\-{letter}\\fR, " if letter else "") + f"\\fB\\-\\-{esc(option)}\\fR \\fI{esc(metavar)}\\fR"
        lines += [".TP", f"\\fB{name}\\fR", esc(text) + ".", ".br",
                  f"Accepts: {esc(accepts)}. Default: {esc(default) if default else 'unset'}.", ".br",
                  f"Launcher option: {opt}."]
    lines += [".SH EXAMPLE", ".nf",
              esc("mpiexec -n 64 -env LD_PRELOAD /opt/sluice/lib/libsluice.so \\"),
              esc("        -env SLUICE_CAPTURE 'ckpt.%r' -env SLUICE_TRACE_DIR $PWD/trace ./simulation"),
              ".fi"]
    lines += see_also(("sluice", 7))
    return "\n".join(lines) + "\n"


def words(options):
    return " ".join(w for o in options for w in (o[0], o[1]) if w)


def value_case(options, indent):
    """case arms completing an option's value: choices, folders, or files."""
    arms = []
    for short, long, metavar, _ in options:
        if not metavar:
            continue
        pats = "|".join(w for w in (short, long) if w)
        if "|" in metavar:
            action = f'COMPREPLY=($(compgen -W "{metavar.replace("|", " ")}" -- "$cur"))'
        elif "DIR" in metavar:
            action = 'COMPREPLY=($(compgen -d -- "$cur"))'
        elif metavar in ("PATH", "OUT.json", "CONTAINER", "WHERE"):
            action = 'COMPREPLY=($(compgen -f -- "$cur"))'
        else:
            action = "COMPREPLY=()"
        arms.append(f"{indent}{pats}) {action}; return ;;")
    return arms


def launcher_completion(options):
    with_value = [o for o in options if o[2]]
    takes = "|".join(w for o in with_value for w in (o[0], o[1]) if w)
    lines = ["# bash completion for sluice (generated by man/generate.py from sluice --help)",
             "# The program after the options completes as a command of its own (bash-completion's",
             "# _command_offset when it is loaded, else command names).",
             "_sluice_program() {",
             "  if declare -F _command_offset >/dev/null; then _command_offset \"$1\"; else",
             "    COMPREPLY=($(compgen -c -- \"${COMP_WORDS[COMP_CWORD]}\")); fi",
             "}",
             "_sluice() {",
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} i",
             "  # The program and its arguments complete as their own command.",
             "  for ((i = 1; i < COMP_CWORD; i++)); do",
             '    case ${COMP_WORDS[i]} in',
             "      --) _sluice_program $((i + 1)); return ;;",
             f"      {takes}) ((i++)) ;;",
             "      -*) ;;",
             "      *) _sluice_program $i; return ;;",
             "    esac",
             "  done",
             '  case $prev in'] + value_case(options, "    ") + [
             "  esac",
             '  if [[ $cur == -* ]]; then',
             f'    COMPREPLY=($(compgen -W "{words(options)}" -- "$cur"))',
             "  else",
             '    COMPREPLY=($(compgen -c -- "$cur"))',
             "  fi",
             "}",
             "complete -F _sluice sluice", ""]
    return "\n".join(lines)


def tool_completion(tool, per_command):
    fn = "_" + tool.replace("-", "_")
    lines = [f"# bash completion for {tool} (generated by man/generate.py from {tool} --help)",
             f"{fn}() {{",
             "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}",
             "  if ((COMP_CWORD == 1)); then",
             f'    COMPREPLY=($(compgen -W "{" ".join(per_command)} --help --version" -- "$cur"))',
             "    return",
             "  fi",
             '  case ${COMP_WORDS[1]} in']
    for name, opts in per_command.items():
        lines += [f"    {name})", '      case $prev in'] + value_case(opts, "        ") + ["      esac",
                  '      if [[ $cur == -* ]]; then',
                  f'        COMPREPLY=($(compgen -W "{words(opts)} --help" -- "$cur"))',
                  "        return", "      fi", "      ;;"]
    lines += ["  esac", '  COMPREPLY=($(compgen -f -- "$cur"))', "}",
              f"complete -o filenames -F {fn} {tool}", ""]
    return "\n".join(lines)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    bindir, version, mandir, compdir = sys.argv[1:5]
    os.makedirs(mandir, exist_ok=True)
    os.makedirs(compdir, exist_ok=True)
    page, launcher_opts = launcher_page(bindir, version)
    write(f"{mandir}/sluice.1", page)
    write(f"{compdir}/sluice", launcher_completion(launcher_opts))
    for tool, summary in (("sluice-ckpt", "list, verify, extract, pack and recover checkpoint containers"),
                          ("sluice-trace", "summarize and convert sluice trace files")):
        page, per_command = tool_page(bindir, tool, version, summary)
        write(f"{mandir}/{tool}.1", page)
        write(f"{compdir}/{tool}", tool_completion(tool, per_command))
    write(f"{mandir}/sluice.7", variables_page(bindir, version))


if __name__ == "__main__":
    main()
