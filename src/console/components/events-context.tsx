/* The page's one lifecycle event stream, given to the views that listen (app.tsx provides it). */
import { createContext } from 'preact';
import { LiveEvents } from '../api/live-events.js';

/** The stream every view subscribes to; app.tsx provides the page's. */
export const EventsContext = createContext<LiveEvents>(new LiveEvents());
