using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Options;

namespace Tunnel2.Hosting;

/// <summary>
/// Runs one of the tunnel's executables the same way: <c>--help</c> prints the usage and exits 0 before a host is
/// built; an option the executable does not know, or one without its value, exits 2 naming it; a configuration that cannot be read or does not validate exits 2 with every failure listed on stderr; an
/// exception that escapes the host exits 1 with it on stderr; otherwise the exit code is the host's
/// (<see cref="IExitCodeSource"/>, 0 without one).
/// </summary>
public static class ProgramHost
{
    public const int InvalidConfigurationExitCode = 2;
    public const int CrashExitCode = 1;

    public static bool WantsHelp(IReadOnlyCollection<string> args) => args.Contains("--help") || args.Contains("-h") || args.Contains("-?");

    /// <param name="name">The executable's name, for the messages.</param>
    /// <param name="commandLine">What the command line may hold.</param>
    /// <param name="create">Builds the host (not started); it may throw for invalid configuration.</param>
    public static Task<int> RunAsync(string name, string[] args, string helpText, CommandLineSpec commandLine, Func<string[], IHost> create) =>
        RunAsync(name, args, helpText, create, Console.Out, Console.Error, commandLine);

    internal static async Task<int> RunAsync(string name, string[] args, string helpText, Func<string[], IHost> create, TextWriter output, TextWriter errors,
        CommandLineSpec? commandLine = null)
    {
        if (WantsHelp(args))
        {
            await output.WriteLineAsync(helpText.TrimEnd());
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
            IExitCodeSource? exitCode = host.Services.GetService<IExitCodeSource>();
            await host.RunAsync(); // starts (options validated on start), waits for shutdown, disposes
            return exitCode?.ExitCode ?? 0;
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
