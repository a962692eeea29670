using Serilog;
using Tunnel2.TestBackend;
using Tunnel2.TestBackend.Configuration;

if (CommandLineHelp.IsRequested(args))
{
    Console.Out.Write(CommandLineHelp.Text);
    return 0;
}

// Bootstrap logger: only for failures before or outside the host, which logs through its own logger.
Log.Logger = new LoggerConfiguration().WriteTo.Console().CreateLogger();
try
{
    await TestBackendApp.Create(args).RunAsync();
    return 0;
}
catch (InvalidConfigurationException ex)
{
    await Console.Error.WriteLineAsync($"TestBackend: invalid configuration: {ex.Message}");
    return 2;
}
catch (Exception ex)
{
    Log.Fatal(ex, "TestBackend terminated unexpectedly");
    return 1;
}
finally
{
    await Log.CloseAndFlushAsync();
}
