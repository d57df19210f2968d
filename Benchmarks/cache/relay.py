"""A TCP relay that counts the bytes each way (server to client "down", client to server "up")
and writes "DOWN UP" to a file after every chunk: bytes on the wire as TCP payload, headers and
bodies alike. Usage: relay.py LISTEN_PORT TARGET_PORT COUNT_FILE"""
import asyncio
import sys

listen_port, target_port, count_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
counts = {"down": 0, "up": 0}


def save():
    with open(count_file, "w") as f:
        f.write(f"{counts['down']} {counts['up']}\n")


async def pipe(reader, writer, key):
    try:
        while data := await reader.read(65536):
            counts[key] += len(data)
            save()
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def handle(client_reader, client_writer):
    server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
    await asyncio.gather(
        pipe(client_reader, server_writer, "up"), pipe(server_reader, client_writer, "down"))


async def main():
    save()
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    async with server:
        await server.serve_forever()


asyncio.run(main())
