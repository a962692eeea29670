using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Tunnel2.Hosting;

/// <summary>
/// Runs one of the tunnel's executables the same way: <c>--help</c> prints the usage and the common options,
/// <c>--help-all</c> every setting, <c>--version</c> the release, each exiting 0 before a host is built; a port
/// already in use exits 2 with one line naming its option (<see cref="ListenerOptions"/>); an option the executable does not know, or one without its value, exits 2 naming it; a configuration that cannot be read or does not validate exits 2 with every failure listed on stderr; an
/// exception that escapes the host exits 1 with it on stderr; otherwise the exit code is the host's
/// (<see cref="IExitCodeSource"/>, 0 without one).
/// </summary>
public static class ProgramHost
{
    public const int InvalidConfigurationExitCode = 2;
    public const int CrashExitCode = 1;

    public static bool WantsHelp(IReadOnlyCollection<string> args) => args.Contains("--help") || args.Contains("-h") || args.Contains("-?");

    public static bool WantsFullHelp(IReadOnlyCollection<string> args) => args.Contains("--help-all");

    public static bool WantsVersion(IReadOnlyCollection<string> args) => args.Contains("--version");

    /// <param name="name">The executable's name, for the messages.</param>
    /// <param name="help">The short usage (<c>--help</c>) and the full one (<c>--help-all</c>).</param>
    /// <param name="commandLine">What the command line may hold.</param>
    /// <param name="create">Builds the host (not started); it may throw for invalid configuration.</param>
    public static Task<int> RunAsync(string name, string[] args, ProgramHelp help, CommandLineSpec commandLine, Func<string[], IHost> create) =>
        RunAsync(name, args, help, create, Console.Out, Console.Error, commandLine);

    internal static Task<int> RunAsync(string name, string[] args, string helpText, Func<string[], IHost> create, TextWriter output, TextWriter errors,
        CommandLineSpec? commandLine = null) =>
        RunAsync(name, args, new ProgramHelp(helpText, helpText), create, output, errors, commandLine);

    internal static async Task<int> RunAsync(string name, string[] args, ProgramHelp help, Func<string[], IHost> create, TextWriter output, TextWriter errors,
        CommandLineSpec? commandLine = null)
    {
        if (WantsFullHelp(args) || WantsHelp(args))
        {
            await output.WriteLineAsync((WantsFullHelp(args) ? help.All : help.Common).TrimEnd());
            return 0;
        }

        if (WantsVersion(args))
        {
            await output.WriteLineAsync($"{name} {ProductVersion.Of(System.Reflection.Assembly.GetEntryAssembly() ?? typeof(ProgramHost).Assembly)}");
            return 0;
        }

        if (commandLine?.Problems(args) is { Count: > 0 } problems)
        {
            await errors.WriteLineAsync($"{name}: invalid command line:");
            foreach (string problem in problems)
            {
                await errors.WriteLineAsync($"  - {problem}");
            }

            await errors.WriteLineAsync("Run with --help for the options.");
            return InvalidConfigurationExitCode;
        }

        try
        {
            IHost host = create(args);
            await using (host as IAsyncDisposable)
            {
                IExitCodeSource? exitCode = host.Services.GetService<IExitCodeSource>();
                try
                {
                    await host.StartAsync(); // options validated on start
                }
                catch (Exception ex) when (host.Services.GetService<ListenerOptions>()?.InUseLine(ex) is { } inUse)
                {
                    await errors.WriteLineAsync(inUse);
                    return InvalidConfigurationExitCode;
                }

                await host.WaitForShutdownAsync();
                return exitCode?.ExitCode ?? 0;
            }
        }
        catch (Exception ex) when (ConfigurationFailures(ex) is { } failures)
        {
            await errors.WriteLineAsync($"{name}: invalid configuration:");
            foreach (string failure in failures)
            {
                await errors.WriteLineAsync($"  - {failure}");
            }

            await errors.WriteLineAsync("Run with --help for the options.");
            return InvalidConfigurationExitCode;
        }
        catch (Exception ex)
        {
            await errors.WriteLineAsync($"{name} terminated unexpectedly: {ex}");
            return CrashExitCode;
        }
    }

    /// <summary>What is wrong with the configuration, when <paramref name="ex"/> says the configuration is at fault; else null.</summary>
    internal static IReadOnlyList<string>? ConfigurationFailures(Exception ex) => ex switch
    {
        OptionsValidationException validation => [.. validation.Failures],
        InvalidConfigurationException invalid => [invalid.Message],

        // The binder's own failures: "Failed to convert configuration value 'soon' at 'X:Y' to type 'System.TimeSpan'."
        InvalidOperationException binder when binder.Message.Contains("configuration", StringComparison.OrdinalIgnoreCase) => [binder.Message],
        _ => null,
    };
}

/// <summary>An executable's usage: <see cref="Common"/> for <c>--help</c> (the common options), <see cref="All"/> for <c>--help-all</c>.</summary>
public sealed record ProgramHelp(string Common, string All);
