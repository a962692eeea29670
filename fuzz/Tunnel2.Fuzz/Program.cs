using SharpFuzz;

namespace Tunnel2.Fuzz;

/// <summary>
/// The fuzz targets: <c>head</c> (the binary head codec's request and response parse, with a re-encoding check, and
/// the HTTP/1 head parser over split buffers) and <c>response-head</c> (the client's backend response-head reader).
/// Without <c>--replay</c> the target runs under AFL++ (SharpFuzz's out-of-process loop); with it, each file given is
/// run once, printing any exception, so a crash AFL++ saved can be looked at.
/// </summary>
public static class Program
{
    public static int Main(string[] args)
    {
        if (args is ["--write-seeds", string directory])
        {
            Seeds.Write(directory);
            return 0;
        }

        Action<byte[]>? target = args.Length > 0 ? TargetOf(args[0]) : null;
        if (target is null)
        {
            Console.Error.WriteLine("usage: Tunnel2.Fuzz head|response-head [--replay file...] | --write-seeds directory");
            return 2;
        }

        if (args.Length > 1 && args[1] == "--replay")
        {
            int failed = 0;
            foreach (string file in args[2..])
            {
                try
                {
                    target(File.ReadAllBytes(file));
                    Console.WriteLine($"{file}: ok");
                }
                catch (Exception ex)
                {
                    failed++;
                    Console.WriteLine($"{file}: {ex}");
                }
            }

            return failed == 0 ? 0 : 1;
        }

        Fuzzer.OutOfProcess.Run(stream =>
        {
            using var copy = new MemoryStream();
            stream.CopyTo(copy);
            target(copy.ToArray());
        });
        return 0;
    }

    private static Action<byte[]>? TargetOf(string name) => name switch
    {
        "head" => HeadTarget.Run,
        "response-head" => ResponseHeadTarget.Run,
        _ => null,
    };
}
