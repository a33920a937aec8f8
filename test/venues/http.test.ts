import { ExchangeClient } from '../../src/exchange/client.js';
import { startSimServer } from '../../src/sim/sim-server.js';
import { CONTRACT_BALANCES, runVenueContract, type VenueHarness } from './venue-contract.js';

const T0 = Date.parse('2024-05-01T00:00:00.000Z');
const credentials = { apiKey: 'contract-http-key', apiSecret: 'contract-http-secret' };

/** The same cases as in-process, through the signed client and the simulated exchange's HTTP server. */
async function harness(): Promise<VenueHarness> {
  const server = await startSimServer({ credentials, balances: { ...CONTRACT_BALANCES } });
  const client = new ExchangeClient({ baseUrl: server.url, ...credentials, rateLimit: false });
  let time = T0;
  return {
    venue: client,
    setPrice: (symbol, price) => {
      time += 1000;
      server.engine.onPrice(symbol, Number(price), time);
      return Promise.resolve();
    },
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

runVenueContract('HTTP client against the simulated exchange server', harness);
