// A scripted HTTP server on 127.0.0.1 that records every request and answers from a list.
import { createServer } from "node:http";

/** `answers`: [{status, body?, headers?}] or "drop" (close the connection unanswered); the last one repeats. */
export async function recordingServer(answers) {
  const requests = [];
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      requests.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      const answer = answers[Math.min(requests.length - 1, answers.length - 1)];
      if (answer === "drop") return request.socket.destroy();
      const body = answer.body === undefined ? "" : typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body);
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
      response.end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
