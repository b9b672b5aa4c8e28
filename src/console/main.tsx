/* The console's entry: its stylesheet and the app, rendered into #app. */
import { render } from 'preact';
import { App } from './app.js';
import './styles.css';

render(<App />, document.getElementById('app')!);
