using Tunnel2.Hosting;
using Tunnel2.TestBackend;
using Tunnel2.TestBackend.Configuration;

return await ProgramHost.RunAsync("TestBackend", args, new ProgramHelp(CommandLineHelp.Text, CommandLineHelp.Text), CommandLineHelp.Spec, TestBackendApp.Create);
