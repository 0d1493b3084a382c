import type { Logger } from "./logger.js";

/** What a request handler of node:http or node:http2's compatibility API may be: sync or async. */
type Handler<Request, Response> = (request: Request, response: Response) => unknown;

/** The part of a response this guard uses: both node:http's and node:http2's compatibility responses have it. */
interface AnswerableResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  writeHead(status: number, headers: Record<string, string>): unknown;
  end(text: string): unknown;
  destroy(error?: Error): unknown;
}

/**
 * A request handler whose error (thrown, or the rejection of the promise it returns) is logged and answered 500,
 * never left to reach the process: docs/decisions.md "A request's error never ends a process".
 */
export function guardRequests<Request, Response extends AnswerableResponse>(
  logger: Logger,
  listener: string,
  handler: Handler<Request, Response>,
): (request: Request, response: Response) => void {
  const failed = (response: Response, error: unknown) => {
    logger.error({ err: error, listener }, "a request's handler failed; answered 500");
    try {
      if (response.headersSent) {
        // Half an answer is not one: the client must see the response cut rather than take it whole.
        if (!response.writableEnded) response.destroy();
        return;
      }
      response.writeHead(500, { "content-type": "text/plain" });
      response.end("internal error\n");
    } catch (answering) {
      logger.warn({ err: answering, listener }, "answering a failed request failed");
    }
  };
  return (request, response) => {
    try {
      const result = handler(request, response);
      if (result instanceof Promise) result.catch((error: unknown) => failed(response, error));
    } catch (error) {
      failed(response, error);
    }
  };
}
