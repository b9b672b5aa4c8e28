import { Argument, type Command } from 'commander';
import type { CliContext } from '../context.js';

/** Every command path of the tree (`''` the root, `'daemon start'`), with its subcommands and options. */
function commandTable(program: Command): Array<{ path: string; subs: string[]; options: string[] }> {
  const out: Array<{ path: string; subs: string[]; options: string[] }> = [];
  const walk = (cmd: Command, path: string) => {
    const subs = cmd.commands.filter((c) => c.name() !== 'help').map((c) => c.name());
    const options = [...cmd.options.map((o) => o.long).filter((l): l is string => l !== undefined), '--help'];
    out.push({ path, subs, options });
    for (const c of cmd.commands) walk(c, path ? `${path} ${c.name()}` : c.name());
  };
  walk(program, '');
  return out;
}

/**
 * A bash completion script for the tree: the command path is read off the words typed so far
 * (each word that names a subcommand of the path so far), then subcommands, or options after a
 * `-`, are offered; files where there is nothing else to offer.
 */
export function bashCompletion(program: Command): string {
  const table = commandTable(program);
  const cases = (pick: (e: (typeof table)[number]) => string[]) =>
    table.map((e) => `    ${JSON.stringify(e.path)}) echo ${JSON.stringify(pick(e).join(' '))} ;;`).join('\n');
  return `# wfx completion for bash: eval "$(wfx completion bash)" in ~/.bashrc
_wfx_subs() {
  case "$1" in
${cases((e) => e.subs)}
  esac
}
_wfx_opts() {
  case "$1" in
${cases((e) => e.options)}
  esac
}
_wfx() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" w i
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ $w == -* ]] && continue
    case " $(_wfx_subs "$path") " in *" $w "*) path="\${path:+$path }$w" ;; esac
  done
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_wfx_opts "$path")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_wfx_subs "$path")" -- "$cur"))
    [[ \${#COMPREPLY[@]} -eq 0 ]] && COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -F _wfx wfx
`;
}

/** zsh runs the bash script through its bash-completion layer. */
function zshCompletion(program: Command): string {
  return `# wfx completion for zsh: eval "$(wfx completion zsh)" in ~/.zshrc
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program)}`;
}

/** fish: subcommands where the path so far allows them, options of the command typed. */
function fishCompletion(program: Command): string {
  const lines = [
    '# wfx completion for fish: wfx completion fish > ~/.config/fish/completions/wfx.fish',
    'complete -c wfx -f',
  ];
  for (const e of commandTable(program)) {
    const words = e.path.split(' ').filter(Boolean);
    const here = words.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${words.at(-1)}`;
    if (e.subs.length > 0) lines.push(`complete -c wfx -n '${here}' -a '${e.subs.join(' ')}'`);
    for (const o of e.options) lines.push(`complete -c wfx -n '${here}' -l ${o.slice(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `wfx completion bash|zsh|fish`: a completion script for the shell, from the command tree. */
export function registerCompletion(program: Command, ctx: CliContext): void {
  program
    .command('completion')
    .description('a shell completion script for wfx: commands, subcommands and options')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      '\nExamples:\n  $ echo \'eval "$(wfx completion bash)"\' >> ~/.bashrc\n  $ wfx completion fish > ~/.config/fish/completions/wfx.fish',
    )
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      ctx.stdout.write(
        shell === 'bash' ? bashCompletion(program) : shell === 'zsh' ? zshCompletion(program) : fishCompletion(program),
      );
    });
}
