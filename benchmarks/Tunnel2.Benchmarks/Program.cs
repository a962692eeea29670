using BenchmarkDotNet.Running;

// dotnet run -c Release --project benchmarks/Tunnel2.Benchmarks -- --filter '*'   (see benchmarks/README.md)
BenchmarkSwitcher.FromAssembly(typeof(Program).Assembly).Run(args);
